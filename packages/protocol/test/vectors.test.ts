// Every vector of test/vectors/vectors.json, data-driven: each vector is classified by its name group
// and frame shape (helpers/vectors.ts) and checked by the handler of its kind. A vector of an unknown
// kind fails the suite instead of being skipped.
//
// client → engine messages: decode, re-encode, compare bytes exactly; also encode from the JSON view
// when the view is complete. engine → client messages: the decoded value must match the JSON view.
// Vectors built from python_compat.py's MIRROR structs (15/17-field SamplingParams → fixmap header, a
// different key order) cannot be byte-equal to what this codec writes for vLLM's real 38-field struct;
// for them the decoded value is checked against the view (and msgspec's own decode verdict).
import { describe, expect, it } from "vitest";
import {
  ENGINE_CORE_DEAD,
  type EngineCoreRequest,
  encodeAbortRequest,
  encodeAddRequest,
  encodeCoordinatorPublish,
  encodeEngineCoreOutputs,
  encodeFrontendWakeup,
  encodeHandshakeInit,
  encodeHandshakeStatus,
  encodeReadyResponse,
  encodeStartDpWave,
  encodeUtilityCall,
  encodeValue,
  engineIdentity,
  Float64,
  ProtocolError,
} from "../src/index.js";
import { EngineCoreReadyResponseCodec, EngineHandshakeMetadataCodec } from "../src/structs/handshake.js";
import { EngineCoreOutputsCodec } from "../src/structs/output.js";
import { EngineCoreRequestCodec } from "../src/structs/request.js";
import {
  decodeCoordinatorPublish,
  decodeFrontendWakeup,
  decodeHandshakeInit,
  decodeHandshakeStatus,
  decodeInputMessage,
  decodeOutputMessage,
  decodeReadyResponse,
  decodeStartDpWavePayload,
  decodeValue,
  engineIndexFromIdentity,
  isEngineCoreDead,
} from "./helpers/frame-shapes.js";
import {
  classify,
  framesOf,
  msgspecVerdict,
  toHex,
  usesMirrorStructs,
  type Vector,
  vectorsFile,
} from "./helpers/vectors.js";
import {
  fromView,
  hasIntegralNumber,
  matchOpaque,
  matchView,
  unwrap,
  type ViewContext,
} from "./helpers/view.js";

type Json = Parameters<typeof matchView>[2];
const hexAll = (fs: readonly Uint8Array[]) => fs.map(toHex);
const ctxFor = (v: Vector, frames: readonly Uint8Array[]): ViewContext => ({
  frames,
  postSnapshot: v.revision !== undefined,
});
/** Aux threshold that reproduces a message: 1 when the vector puts every array in aux frames. */
const thresholdFor = (frames: readonly Uint8Array[]) => (frames.length > 1 ? 1 : 256);
const view = (v: Vector) => v.decoded as Json;

const containsFloat64 = (v: unknown): boolean =>
  v instanceof Float64 ||
  (Array.isArray(v) && v.some(containsFloat64)) ||
  (v instanceof Map && [...v.values()].some(containsFloat64)) ||
  (typeof v === "object" && v !== null && Object.values(v).some(containsFloat64));

const handlers: Record<string, (v: Vector) => void> = {
  identity(v) {
    const [id] = framesOf(v);
    const index = (v.decoded as { engine_index: number }).engine_index;
    expect(toHex(engineIdentity(index))).toBe(toHex(id!));
    expect(engineIndexFromIdentity(id!)).toBe(index);
  },

  dead(v) {
    const frames = framesOf(v);
    expect(isEngineCoreDead(frames)).toBe(true);
    expect(toHex(ENGINE_CORE_DEAD)).toBe(toHex(frames[0]!));
    expect(decodeOutputMessage(frames)).toEqual({ kind: "dead" });
  },

  "raw-frame"(v) {
    // Subscription (0x01) / READY frames are not msgpack messages of this codec; they must not be
    // mistaken for outputs or the dead sentinel.
    const frames = framesOf(v);
    expect(isEngineCoreDead(frames)).toBe(false);
    expect(() => decodeOutputMessage(frames)).toThrow(ProtocolError);
  },

  "handshake-status"(v) {
    const frames = framesOf(v);
    const payload = frames[frames.length - 1]!;
    const expected = unwrap(view(v), "payload") as Record<string, Json>;
    const inner = (expected.payload ?? expected) as Record<string, Json>;
    if (!("local" in inner) || !("headless" in inner)) {
      // A bare {"status": ...} map (Rust test literal): vLLM's frontend reads msg["local"] and
      // msg["headless"] unconditionally, so it is not a valid HELLO/READY.
      expect(() => decodeHandshakeStatus(payload)).toThrow(ProtocolError);
      return;
    }
    const decoded = decodeHandshakeStatus(payload);
    expect(decoded).toEqual({
      status: inner.status,
      local: inner.local,
      headless: inner.headless,
      ...("parallel_config_hash" in inner ? { parallelConfigHash: inner.parallel_config_hash } : {}),
    });
    expect(toHex(encodeHandshakeStatus(decoded))).toBe(toHex(payload));
  },

  "handshake-init"(v) {
    const frames = framesOf(v);
    const payload = frames[frames.length - 1]!;
    const decoded = decodeHandshakeInit(payload);
    expect(toHex(encodeHandshakeInit(decoded))).toBe(toHex(payload));
    if (v.decoded !== null) {
      matchView(EngineHandshakeMetadataCodec, decoded, view(v), ctxFor(v, frames), "EngineHandshakeMetadata");
      const rebuilt = fromView(EngineHandshakeMetadataCodec, unwrap(view(v), "EngineHandshakeMetadata"));
      expect(rebuilt).toBeDefined();
      expect(toHex(encodeHandshakeInit(rebuilt as never))).toBe(toHex(payload));
    }
  },

  registration(v) {
    const frames = framesOf(v);
    const payload = frames[frames.length - 1]!;
    const decoded = decodeReadyResponse(payload);
    matchView(EngineCoreReadyResponseCodec, decoded, view(v), ctxFor(v, frames), "EngineCoreReadyResponse");
    if (v.revision === undefined) {
      expect(toHex(encodeReadyResponse(decoded))).toBe(toHex(payload));
    } else {
      // Post-snapshot engine: extra keys are ignored on decode, so re-encoding gives the pinned 18 keys.
      expect(payload[0]).toBe(0xde);
      expect(toHex(encodeReadyResponse(decoded)).slice(0, 6)).toBe("de0012");
    }
  },

  add(v) {
    const frames = framesOf(v);
    // ROUTER view [identity, 0x00, payload, ...aux] or a bare payload.
    const msg =
      frames.length >= 3 && frames[0]!.byteLength === 2 ? frames.slice(1) : [Uint8Array.of(0), ...frames];
    const verdict = msgspecVerdict(v);
    if (verdict === "error") {
      // msgspec (and so the Python engine) rejects it, e.g. 6-element Rust-only requests.
      expect(() => decodeInputMessage(msg)).toThrow(ProtocolError);
      return;
    }
    const decoded = decodeInputMessage(msg);
    expect(decoded.type).toBe("add");
    if (decoded.type !== "add") return;
    const ctx = ctxFor(v, msg.slice(1));
    if (v.decoded !== null)
      matchView(EngineCoreRequestCodec, decoded.request, view(v), ctx, "EngineCoreRequest");
    const reencoded = encodeAddRequest(decoded.request, { auxThreshold: thresholdFor(msg.slice(1)) });
    if (usesMirrorStructs(v) || v.unverified !== undefined) {
      // Mirror structs / Rust (float32) encodings: not byte-comparable; the re-encoding must decode to
      // the same value instead.
      const again = decodeInputMessage(reencoded);
      expect(again).toEqual(decoded);
      return;
    }
    expect(hexAll(reencoded)).toEqual(hexAll(msg));
    if (v.decoded !== null) {
      const requestView = unwrap(view(v), "EngineCoreRequest");
      const rebuilt = fromView(EngineCoreRequestCodec, requestView);
      // A full positional view of a real-msgspec request must be rebuildable.
      if (Array.isArray(requestView) && requestView.length === 20) expect(rebuilt).toBeDefined();
      if (rebuilt !== undefined) {
        expect(hexAll(encodeAddRequest(rebuilt as EngineCoreRequest))).toEqual(hexAll(msg));
      }
    }
  },

  abort(v) {
    const msg = framesOf(v).slice(1);
    const decoded = decodeInputMessage(msg);
    // The view is either the id list itself or {"abort_request_ids": [...]}.
    const ids = Array.isArray(v.decoded)
      ? v.decoded
      : (v.decoded as { abort_request_ids: string[] }).abort_request_ids;
    expect(decoded).toEqual({ type: "abort", requestIds: ids });
    if (decoded.type !== "abort") return;
    expect(hexAll(encodeAbortRequest(decoded.requestIds))).toEqual(hexAll(msg));
  },

  utility(v) {
    const msg = framesOf(v).slice(1);
    const decoded = decodeInputMessage(msg);
    expect(decoded.type).toBe("utility");
    if (decoded.type !== "utility") return;
    type UtilityView = { client_index: number; call_id: number | string; method: string; args: Json[] };
    const e: UtilityView = Array.isArray(v.decoded)
      ? { client_index: v.decoded[0], call_id: v.decoded[1], method: v.decoded[2], args: v.decoded[3] }
      : (v.decoded as UtilityView);
    expect(decoded.call.clientIndex).toBe(e.client_index);
    expect(decoded.call.callId).toBe(BigInt(e.call_id));
    expect(decoded.call.method).toBe(e.method);
    matchOpaque(decoded.call.args, e.args, "args");
    expect(hexAll(encodeUtilityCall(decoded.call))).toEqual(hexAll(msg));
    const fromJson = encodeUtilityCall({
      clientIndex: e.client_index,
      callId: BigInt(e.call_id),
      method: e.method,
      args: e.args,
    });
    // Encoding from the JSON view is exact, except that JSON cannot mark an integral float in the
    // (opaque) args: that is the only acceptable difference.
    if (hexAll(fromJson).join() !== hexAll(msg).join()) {
      expect(hasIntegralNumber(e.args) && containsFloat64(decoded.call.args)).toBe(true);
    }
  },

  "start-dp-wave"(v) {
    const frames = framesOf(v);
    const e = v.decoded as { wave: number; exclude_engine_index: number | null };
    expect(decodeStartDpWavePayload(frames[1]!)).toEqual({
      wave: e.wave,
      excludeEngineIndex: e.exclude_engine_index,
    });
    expect(decodeInputMessage(frames)).toEqual({
      type: "start_dp_wave",
      wave: e.wave,
      excludeEngineIndex: e.exclude_engine_index,
    });
    expect(hexAll(encodeStartDpWave({ wave: e.wave, excludeEngineIndex: e.exclude_engine_index }))).toEqual(
      hexAll(frames),
    );
  },

  outputs(v) {
    const frames = framesOf(v);
    const verdict = msgspecVerdict(v);
    if (verdict === "error") {
      expect(() => decodeOutputMessage(frames)).toThrow(ProtocolError);
      return;
    }
    const decoded = decodeOutputMessage(frames);
    expect(decoded.kind).toBe("outputs");
    if (decoded.kind !== "outputs") return;
    if (v.decoded !== null) {
      matchView(EngineCoreOutputsCodec, decoded.outputs, view(v), ctxFor(v, frames), "EngineCoreOutputs");
    }
    const reencoded = encodeEngineCoreOutputs(decoded.outputs, { auxThreshold: thresholdFor(frames) });
    const fullLength = frames[0]![0] === 0x98 && v.revision === undefined;
    if (v.provenance === "msgspec-real" && fullLength) {
      expect(hexAll(reencoded)).toEqual(hexAll(frames));
    } else {
      // Truncated arrays (msgpack-python fixtures) or post-snapshot extra fields: the encoder always
      // writes the pinned 8/14 fields, so compare values instead of bytes.
      const again = decodeOutputMessage(reencoded);
      expect(again).toEqual(decoded);
    }
  },

  "coordinator-publish"(v) {
    const [payload] = framesOf(v);
    const e = v.decoded as {
      counts: [number, number, number][] | null;
      wave: number;
      engines_running: boolean;
    };
    const decoded = decodeCoordinatorPublish(payload!);
    expect(decoded).toEqual({ counts: e.counts, wave: e.wave, enginesRunning: e.engines_running });
    expect(toHex(encodeCoordinatorPublish(decoded))).toBe(toHex(payload!));
  },

  "frontend-wakeup"(v) {
    const [payload] = framesOf(v);
    const e = v.decoded as { exclude_engine_index?: number; exclude_engine?: string; wave: number };
    const decoded = decodeFrontendWakeup(payload!);
    expect(decoded.wave).toBe(e.wave);
    if (e.exclude_engine !== undefined) {
      expect(decoded.engine instanceof Uint8Array ? `bin ${toHex(decoded.engine)}` : decoded.engine).toBe(
        e.exclude_engine,
      );
    } else {
      expect(decoded.engine).toBe(e.exclude_engine_index);
    }
    expect(toHex(encodeFrontendWakeup(decoded))).toBe(toHex(payload!));
  },

  value(v) {
    const [payload] = framesOf(v);
    const decoded = decodeValue(payload!);
    if (v.decoded !== null) matchOpaque(decoded, view(v), v.name);
    expect(toHex(encodeValue(decoded))).toBe(toHex(payload!));
  },
};

describe("vectors.json", () => {
  const vectors = vectorsFile.vectors;

  it("has vectors and the pinned snapshot", () => {
    expect(vectors.length).toBeGreaterThan(50);
    expect(vectorsFile.about.vllm_snapshot).toBe("c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1");
  });

  it.each(vectors.map((v) => [v.name, v] as const))("%s", (_name, v) => {
    const kind = classify(v);
    const handler = handlers[kind];
    if (handler === undefined) {
      throw new Error(
        `vector ${v.name} has an unknown kind (${kind}); add a handler or a classification rule`,
      );
    }
    handler(v);
  });
});
