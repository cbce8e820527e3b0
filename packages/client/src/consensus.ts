// Value equality for `callUtilityConsensus`: the engines' decoded results agree when they carry the same
// msgpack value. Numbers compare numerically across int/float/bigint (`Float64` boxes included), as Python's
// `==` does for the engines' own results; containers compare element by element.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";

function unbox(v: unknown): unknown {
  return v instanceof Float64 ? v.value : v;
}

function isNumeric(v: unknown): v is number | bigint {
  return typeof v === "number" || typeof v === "bigint";
}

function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

export function sameValue(left: unknown, right: unknown): boolean {
  const a = unbox(left);
  const b = unbox(right);
  if (isNumeric(a) && isNumeric(b)) {
    // biome-ignore lint/suspicious/noDoubleEquals: numeric comparison across number and bigint
    return a == b || (Number.isNaN(a) && Number.isNaN(b));
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return Object.is(a, b);
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    return ArrayBuffer.isView(a) && ArrayBuffer.isView(b) && sameBytes(a, b);
  }
  if (a instanceof MsgpackExt || b instanceof MsgpackExt) {
    return (
      a instanceof MsgpackExt && b instanceof MsgpackExt && a.type === b.type && sameBytes(a.data, b.data)
    );
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameValue(v, b[i]));
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map) || !(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !sameValue(v, b.get(k))) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false;
    if (!sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
