// Generic msgspec-compatible values (utility arguments/results, opaque maps).
import { ANY } from "../schema/codec.js";
import { decodeFrames, encodeSingle } from "./run.js";

export function encodeValue(value: unknown): Uint8Array {
  return encodeSingle(ANY, value, "value");
}

export function decodeValue(bytes: Uint8Array): unknown {
  return decodeFrames(ANY, [bytes], "value");
}
