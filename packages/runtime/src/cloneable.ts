// Values that cross threads by structured clone, kept cheap and faithful: utility-call arguments and
// results (structured clone drops class identity, so the two wrapper classes that carry msgspec meaning,
// Float64 and MsgpackExt, are tagged on the way out and rebuilt inside) and frames (a cloned view would drag
// its whole backing store along).
import { Float64, MsgpackExt, type UtilityOutput } from "@vllm-engine-core/protocol";

const FLOAT64_TAG = "__vllmFloat64";
const EXT_TAG = "__vllmMsgpackExt";

export function packArgs(value: unknown): unknown {
  if (value instanceof Float64) return { [FLOAT64_TAG]: value.value };
  if (value instanceof MsgpackExt) return { [EXT_TAG]: [value.type, value.data] };
  if (Array.isArray(value)) return value.map(packArgs);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [packArgs(k), packArgs(v)]));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = packArgs(v);
    return out;
  }
  return value;
}

export function unpackArgs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpackArgs);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [unpackArgs(k), unpackArgs(v)]));
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === FLOAT64_TAG) return new Float64(value[FLOAT64_TAG] as number);
    if (keys.length === 1 && keys[0] === EXT_TAG) {
      const [type, data] = value[EXT_TAG] as [number, Uint8Array];
      return new MsgpackExt(type, data);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = unpackArgs(v);
    return out;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A frame that can be cloned cheaply: structured clone copies a view's whole backing ArrayBuffer, and
 * encoder output or small received Buffers are views into large shared pools.
 */
export function ownedFrame(frame: Uint8Array): Uint8Array {
  if (
    frame.byteOffset === 0 &&
    frame.byteLength === frame.buffer.byteLength &&
    !(frame.buffer instanceof SharedArrayBuffer)
  ) {
    return frame;
  }
  return new Uint8Array(frame);
}

/** A utility output the runtime packed (packArgs), rebuilt: its result may hold Float64/MsgpackExt. */
export function unpackUtilityOutput(output: UtilityOutput): UtilityOutput {
  return unpackArgs(output) as UtilityOutput;
}
