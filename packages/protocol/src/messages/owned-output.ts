// The decode of an output message on the thread that owns (some of) its requests, when the caller already
// knows which request each output belongs to (the runtime routed the message by its request ids and says,
// per output, which of this thread's requests it names). Same result and same errors as decodeOutputMessage;
// the one difference is how a known output's request_id is read: its bytes are compared with the known id
// and, when equal, the known string itself is the value. No string is built for it and no new string is
// hashed when the caller looks the request up (what the owner does once per output, up to millions a second).
// An id that does not match (the caller's request changed since the routing) is decoded as usual.
import { withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import type { Codec } from "../schema/codec.js";
import { type AnyField, arrayStruct } from "../schema/struct.js";
import {
  type EngineCoreOutput,
  EngineCoreOutputCodec,
  type EngineCoreOutputs,
  EngineCoreOutputsCodec,
} from "../structs/output.js";
import { isEngineCoreDead } from "./identity.js";
import { checkOutputShape, type OutputMessage } from "./output.js";
import { decodeFrames } from "./run.js";

/**
 * What decodeOutputMessageKnowing needs of one of the caller's requests: the id to compare the wire's
 * request_id with. Exported so that a caller can name the type of the `known` argument; it is structural,
 * so the caller's own request records (anything with a `requestId` string) serve as they are, uncopied.
 */
export interface KnownRequest {
  readonly requestId: string;
}

/** The id the next EngineCoreOutput's request_id is expected to be (set per element by OWNED_OUTPUTS). */
let expectedId: string | undefined;
/** The caller's routing of the message being decoded (set for the duration of one decode). */
let routing: { slots: Int32Array; known: readonly (KnownRequest | undefined)[] } | undefined;

const KNOWN_REQUEST_ID: Codec<string> = {
  label: "str",
  nullable: false,
  decode: (r: Reader) => {
    const known = expectedId;
    if (known === undefined) return r.str();
    expectedId = undefined;
    return r.knownStr(known);
  },
  encode: () => {
    throw new Error("decode-only codec");
  },
};

const replaceField = (
  fields: readonly AnyField[],
  wire: string,
  codec: Codec<unknown, unknown>,
): AnyField[] => fields.map((field) => (field.wire === wire ? { ...field, codec } : field));

/** EngineCoreOutput with its request_id read by KNOWN_REQUEST_ID (every version's layout, as the original). */
const KnownIdOutputCodec = arrayStruct(
  "EngineCoreOutput",
  replaceField(EngineCoreOutputCodec.allFields, "request_id", KNOWN_REQUEST_ID),
);

/** `list[EngineCoreOutput]` that tells each element's decode the id it expects (list() otherwise). */
const OWNED_OUTPUTS: Codec<EngineCoreOutput[]> = {
  label: "list[EngineCoreOutput]",
  nullable: false,
  decode: (r: Reader) => {
    const n = r.array();
    const out = new Array<EngineCoreOutput>(n);
    const route = routing;
    let i = 0;
    try {
      for (; i < n; i++) {
        const slot = route !== undefined && i < route.slots.length ? route.slots[i]! : -1;
        expectedId = slot >= 0 ? route!.known[slot]?.requestId : undefined;
        out[i] = KnownIdOutputCodec.decode(r) as unknown as EngineCoreOutput;
      }
    } catch (err) {
      throw withSegment(err, `[${i}]`);
    } finally {
      expectedId = undefined;
    }
    return out;
  },
  encode: () => {
    throw new Error("decode-only codec");
  },
};

const OwnedOutputsCodec = arrayStruct(
  "EngineCoreOutputs",
  replaceField(EngineCoreOutputsCodec.allFields, "outputs", OWNED_OUTPUTS),
);

/**
 * decodeOutputMessage, for a caller that knows the requests: `slots[i]` is the index in `known` of the
 * request that output `i` names (-1 or past the end of `slots`: not known). The result is the one
 * decodeOutputMessage gives; a known request's id is `known[slot].requestId` itself when the wire's bytes
 * equal it.
 */
export function decodeOutputMessageKnowing(
  frames: readonly Uint8Array[],
  slots: Int32Array,
  known: readonly (KnownRequest | undefined)[],
): OutputMessage {
  if (isEngineCoreDead(frames)) return { kind: "dead" };
  routing = { slots, known };
  let outputs: EngineCoreOutputs;
  try {
    outputs = decodeFrames(OwnedOutputsCodec, frames, "EngineCoreOutputs") as unknown as EngineCoreOutputs;
  } finally {
    routing = undefined;
  }
  checkOutputShape(outputs);
  return { kind: "outputs", outputs };
}
