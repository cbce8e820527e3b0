// Encoding of opaque (Python `Any`) values. JS has one number type, so integral numbers become msgpack
// ints and the rest float64; wrap a number in Float64 to force a float.
import { fail, withSegment } from "../msgpack/fault.js";
import { Float64, MsgpackExt } from "../msgpack/values.js";
import type { Writer } from "../msgpack/writer.js";

const MAX_DEPTH = 512;
let depth = 0;

export function encodeAny(w: Writer, v: unknown): void {
  switch (typeof v) {
    case "number":
      if (Number.isSafeInteger(v)) w.int(v);
      else w.f64(v);
      return;
    case "string":
      w.str(v);
      return;
    case "boolean":
      w.bool(v);
      return;
    case "bigint":
      w.bigint(v);
      return;
    case "undefined":
      w.nil();
      return;
    case "object":
      break;
    default:
      fail(`cannot encode a ${typeof v} value`);
  }
  if (v === null) {
    w.nil();
    return;
  }
  if (v instanceof Float64) {
    w.f64(v.value);
    return;
  }
  if (v instanceof Uint8Array) {
    w.bin(v);
    return;
  }
  if (v instanceof MsgpackExt) {
    w.ext(v.type, v.data);
    return;
  }
  if (depth >= MAX_DEPTH) fail("value nested too deeply (or contains a cycle)");
  depth++;
  try {
    if (Array.isArray(v) || v instanceof Set) {
      const items = Array.isArray(v) ? v : [...v];
      w.arrayHeader(items.length);
      for (let i = 0; i < items.length; i++) {
        try {
          encodeAny(w, items[i]);
        } catch (err) {
          throw withSegment(err, `[${i}]`);
        }
      }
    } else if (v instanceof Map) {
      w.mapHeader(v.size);
      for (const [k, val] of v) {
        encodeAny(w, k);
        try {
          encodeAny(w, val);
        } catch (err) {
          throw withSegment(err, `[${String(k)}]`);
        }
      }
    } else if (ArrayBuffer.isView(v)) {
      w.bin(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        fail(
          `cannot encode an instance of ${(v as object).constructor?.name ?? "a class"} (use plain objects, arrays, Map, Uint8Array, Float64)`,
        );
      }
      const keys = Object.keys(v);
      let count = 0;
      for (const k of keys) if ((v as Record<string, unknown>)[k] !== undefined) count++;
      w.mapHeader(count);
      for (const k of keys) {
        const val = (v as Record<string, unknown>)[k];
        if (val === undefined) continue;
        w.str(k);
        try {
          encodeAny(w, val);
        } catch (err) {
          throw withSegment(err, `[${JSON.stringify(k)}]`);
        }
      }
    }
  } finally {
    depth--;
  }
}
