// Input socket (frontend ROUTER → engine DEALER): frames `[type byte, payload, ...aux]` (identity not included).
import { ProtocolError } from "../errors/classes.js";
import { fail, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import { skipValues } from "../msgpack/skip.js";
import { Writer } from "../msgpack/writer.js";
import { ANY, CALL_ID, INT, STR } from "../schema/codec.js";
import { encodeAny } from "../schema/opaque.js";
import {
  type DecodedEngineCoreRequest,
  type EngineCoreRequest,
  EngineCoreRequestCodec,
} from "../structs/request.js";
import { RequestType } from "./identity.js";
import { decodeCustom, decodeFrames, type EncodeOptions, encodeCustom, encodeFrames } from "./run.js";

export interface UtilityCall {
  /** This frontend's index in EngineZmqAddresses.outputs (selects the reply socket). */
  clientIndex: number;
  /** Opaque u64 echoed in UtilityOutput.callId (negative ids are reserved for the engine). */
  callId: bigint | number;
  method: string;
  /** Positional arguments (always an array on the wire). */
  args: unknown[];
}

export interface StartDpWave {
  wave: number;
  excludeEngineIndex: number | null;
}

export type InputMessage =
  | { type: "add"; request: DecodedEngineCoreRequest }
  | { type: "abort"; requestIds: string[] }
  | { type: "utility"; call: UtilityCall & { callId: bigint } }
  | { type: "start_dp_wave"; wave: number; excludeEngineIndex: number | null };

/** ADD: `[0x00, EngineCoreRequest, ...aux]`. */
export function encodeAddRequest(request: EngineCoreRequest, options?: EncodeOptions): Uint8Array[] {
  const frames = encodeFrames(EngineCoreRequestCodec, request, "EngineCoreRequest", options);
  return [Uint8Array.of(RequestType.ADD), ...frames];
}

/** ABORT: `[0x01, [request_id, ...]]`. */
export function encodeAbortRequest(requestIds: readonly string[]): Uint8Array[] {
  const frames = encodeCustom("abort request", undefined, (w) => {
    if (!Array.isArray(requestIds)) fail("request ids must be an array of strings");
    w.arrayHeader(requestIds.length);
    for (let i = 0; i < requestIds.length; i++) {
      try {
        STR.encode(w, requestIds[i]!);
      } catch (err) {
        throw withSegment(err, `[${i}]`);
      }
    }
  });
  return [Uint8Array.of(RequestType.ABORT), ...frames];
}

/** UTILITY: `[0x03, [client_index, call_id, method, args]]`. */
export function encodeUtilityCall(call: UtilityCall): Uint8Array[] {
  const frames = encodeCustom("utility call", undefined, (w) => {
    w.arrayHeader(4);
    encodeField(".client_index", () => INT.encode(w, call.clientIndex));
    encodeField(".call_id", () => CALL_ID.encode(w, call.callId));
    encodeField(".method", () => STR.encode(w, call.method));
    encodeField(".args", () => {
      if (!Array.isArray(call.args)) fail("args must be an array of positional arguments");
      encodeAny(w, call.args);
    });
  });
  return [Uint8Array.of(RequestType.UTILITY), ...frames];
}

/** START_DP_WAVE payload `[wave, exclude_engine_index]` (sent by the coordinator on its engine XPUB). */
export function encodeStartDpWavePayload(msg: StartDpWave): Uint8Array {
  return encodeCustom("START_DP_WAVE", undefined, (w) => {
    w.arrayHeader(2);
    encodeField(".wave", () => INT.encode(w, msg.wave));
    encodeField(".exclude_engine_index", () =>
      msg.excludeEngineIndex === null || msg.excludeEngineIndex === undefined
        ? w.nil()
        : INT.encode(w, msg.excludeEngineIndex),
    );
  })[0]!;
}

/** START_DP_WAVE message frames `[0x02, payload]`. */
export function encodeStartDpWave(msg: StartDpWave): Uint8Array[] {
  return [Uint8Array.of(RequestType.START_DP_WAVE), encodeStartDpWavePayload(msg)];
}

export function decodeStartDpWavePayload(payload: Uint8Array): StartDpWave {
  return decodeCustom([payload], "START_DP_WAVE", readStartDpWave);
}

function readStartDpWave(r: Reader): StartDpWave {
  const n = r.array();
  if (n < 2) fail(`expected [wave, exclude_engine_index], got ${n} element(s)`);
  const wave = field(".wave", () => r.int());
  const excludeEngineIndex = field(".exclude_engine_index", () => (r.nil() ? null : r.int()));
  for (let i = 2; i < n; i++) r.skip();
  return { wave, excludeEngineIndex };
}

/** Engine side of the input socket: decode `[type, payload, ...aux]`. */
export function decodeInputMessage(frames: readonly Uint8Array[]): InputMessage {
  const typeFrame = frames[0];
  if (typeFrame === undefined || typeFrame.byteLength !== 1) {
    throw new ProtocolError({
      struct: "input message",
      detail: `expected a 1-byte request type frame, got ${typeFrame === undefined ? "no frames" : `${typeFrame.byteLength} bytes`}`,
    });
  }
  const payloadFrames = frames.slice(1);
  switch (typeFrame[0]) {
    case RequestType.ADD:
      return {
        type: "add",
        request: decodeFrames(EngineCoreRequestCodec, payloadFrames, "EngineCoreRequest"),
      };
    case RequestType.ABORT:
      return {
        type: "abort",
        requestIds: decodeCustom(payloadFrames, "abort request", (r) => {
          const n = r.array();
          const ids = new Array<string>(n);
          for (let i = 0; i < n; i++) ids[i] = field(`[${i}]`, () => r.str());
          return ids;
        }),
      };
    case RequestType.UTILITY:
      return {
        type: "utility",
        call: decodeCustom(payloadFrames, "utility call", (r) => {
          const n = r.array();
          if (n !== 4) fail(`expected [client_index, call_id, method, args], got ${n} element(s)`);
          const clientIndex = field(".client_index", () => r.int());
          const callId = field(".call_id", () => CALL_ID.decode(r));
          const method = field(".method", () => r.str());
          const args = field(".args", () => {
            if (!r.isArray()) fail("expected args as an array");
            return ANY.decode(r) as unknown[];
          });
          return { clientIndex, callId, method, args };
        }),
      };
    case RequestType.START_DP_WAVE: {
      const m = decodeCustom(payloadFrames, "START_DP_WAVE", readStartDpWave);
      return { type: "start_dp_wave", wave: m.wave, excludeEngineIndex: m.excludeEngineIndex };
    }
    default:
      throw new ProtocolError({
        struct: "input message",
        detail: `unknown request type byte 0x${typeFrame[0]!.toString(16).padStart(2, "0")}`,
      });
  }
}

function field<T>(segment: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw withSegment(err, segment);
  }
}

function encodeField(segment: string, fn: () => void): void {
  field(segment, fn);
}

const CURRENT_WAVE = EngineCoreRequestCodec.fields.findIndex((f) => f.wire === "current_wave");
const waveWriter = new Writer(16);

/**
 * The ADD `frames` (from encodeAddRequest) with `current_wave` set to `wave`, without decoding or
 * re-encoding the request: the payload is walked by msgpack headers to the field (skipValues) and the int
 * there is replaced by `wave`'s shortest encoding, as msgspec writes it. With a DP coordinator the runtime
 * stamps the wave it knows at send time into a request the submitting thread encoded (vLLM:
 * DPAsyncMPClient.add_request_async sets request.current_wave, vllm/v1/engine/core_client.py).
 * The other frames are returned as they are.
 */
export function withCurrentWave(frames: readonly Uint8Array[], wave: number): Uint8Array[] {
  const payload = frames[1];
  if (frames[0]?.[0] !== RequestType.ADD || payload === undefined) {
    throw new ProtocolError({
      struct: "EngineCoreRequest",
      detail: "not an ADD message",
      direction: "encode",
    });
  }
  const end = payload.byteLength;
  const header = payload[0] ?? 0;
  const headerSize = (header & 0xf0) === 0x90 ? 1 : header === 0xdc ? 3 : header === 0xdd ? 5 : 0;
  const length =
    headerSize === 1 ? header & 0x0f : headerSize === 3 ? (payload[1]! << 8) | payload[2]! : Number.NaN;
  const start = headerSize === 0 ? -1 : skipValues(payload, headerSize, end, CURRENT_WAVE);
  const stop = start < 0 ? -1 : skipValues(payload, start, end, 1);
  if (headerSize === 0 || !(length > CURRENT_WAVE) || stop < 0) {
    throw new ProtocolError({
      struct: "EngineCoreRequest",
      field: "EngineCoreRequest.current_wave",
      detail: "the encoded request has no current_wave field to stamp",
      direction: "encode",
    });
  }
  waveWriter.reset(Number.POSITIVE_INFINITY);
  INT.encode(waveWriter, wave);
  const int = waveWriter.buf.subarray(0, waveWriter.pos);
  const stamped = new Uint8Array(start + int.byteLength + (end - stop));
  stamped.set(payload.subarray(0, start), 0);
  stamped.set(int, start);
  stamped.set(payload.subarray(stop, end), start + int.byteLength);
  return [frames[0]!, stamped, ...frames.slice(2)];
}
