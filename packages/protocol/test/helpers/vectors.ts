// Loading and classifying test/vectors/vectors.json. Classification is by name group + frame shape, so
// new vectors of known kinds are covered automatically; anything unrecognised is reported as
// "unknown" and the suite fails on it.
import { readFileSync } from "node:fs";

export interface Vector {
  name: string;
  source_file: string;
  description: string;
  frames_hex: string[];
  decoded: unknown;
  provenance: "msgspec-real" | "msgpack-python" | "vllm-test-fixture" | "hand-encoded";
  provenance_note: string;
  decode_check?: string;
  unverified?: string;
  revision?: string;
}

export const vectorsFile: { about: Record<string, unknown>; vectors: Vector[] } = JSON.parse(
  readFileSync(new URL("../vectors/vectors.json", import.meta.url), "utf8"),
);

export const framesOf = (v: Vector): Uint8Array[] =>
  v.frames_hex.map((h) => new Uint8Array(Buffer.from(h, "hex")));
export const toHex = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");

export type VectorKind =
  | "identity" // 2-byte routing identity
  | "dead" // ENGINE_CORE_DEAD sentinel
  | "raw-frame" // hand-encoded single non-msgpack frame (subscription 0x01, READY)
  | "handshake-status" // [identity, HELLO/READY dict] or a bare status dict
  | "handshake-init" // [identity, EngineHandshakeMetadata]
  | "registration" // [identity, EngineCoreReadyResponse] or a bare ready response
  | "add" // [identity, 0x00, EngineCoreRequest, ...aux] or a bare EngineCoreRequest payload
  | "abort" // [identity, 0x01, [ids]]
  | "utility" // [identity, 0x03, [client, call_id, method, args]]
  | "start-dp-wave" // [0x02, [wave, exclude]]
  | "outputs" // [EngineCoreOutputs, ...aux]
  | "coordinator-publish" // [counts, wave, running]
  | "frontend-wakeup" // [engine, wave]
  | "value" // opaque msgspec value (plain dicts, post-snapshot notification structs)
  | "unknown";

const GROUPS = [
  "python_compat",
  "python_compat_00cdc9fe2",
  "rust_test",
  "notifications",
  "identity",
  "handshake",
  "input",
  "request",
  "output",
  "coordinator",
  "rust_client",
] as const;

/** Is the first msgpack element of an array payload a str (request id) or an int (engine index)? */
function firstElementKind(payload: Uint8Array): "str" | "int" | "other" {
  const b = payload[0]!;
  let at: number;
  if ((b & 0xf0) === 0x90) at = 1;
  else if (b === 0xdc) at = 3;
  else if (b === 0xdd) at = 5;
  else return "other";
  const e = payload[at];
  if (e === undefined) return "other";
  if ((e & 0xe0) === 0xa0 || e === 0xd9 || e === 0xda || e === 0xdb) return "str";
  if (e < 0x80 || e >= 0xe0 || (e >= 0xcc && e <= 0xd3)) return "int";
  return "other";
}

const isMap = (b: number) => (b & 0xf0) === 0x80 || b === 0xde || b === 0xdf;
const isArray = (b: number) => (b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd;
const ascii = (f: Uint8Array) => String.fromCharCode(...f);

/** A msgpack map whose first key is `key`. */
function mapStartsWith(payload: Uint8Array, key: string): boolean {
  const b = payload[0]!;
  const at = (b & 0xf0) === 0x80 ? 1 : b === 0xde ? 3 : b === 0xdf ? 5 : -1;
  if (at < 0) return false;
  const h = payload[at]!;
  if ((h & 0xe0) !== 0xa0) return false;
  const n = h & 0x1f;
  return ascii(payload.subarray(at + 1, at + 1 + n)) === key;
}

/** The name prefix when it is one of the known groups (group-specific rules apply), else undefined. */
export function groupOf(v: Vector): string | undefined {
  const prefix = v.name.slice(0, v.name.indexOf("."));
  return (GROUPS as readonly string[]).includes(prefix) ? prefix : undefined;
}

export function classify(v: Vector): VectorKind {
  // Group-specific shapes first (raw frames that are not msgpack), then generic frame-shape rules
  // that apply to every group, so a vector of a known kind under a new name prefix is still covered.
  const group = groupOf(v);
  const frames = framesOf(v);
  const n = frames.length;
  const f0 = frames[0]!;
  if (group === "identity") return n === 1 && f0.byteLength === 2 ? "identity" : "unknown";
  if (n === 1 && ascii(f0) === "ENGINE_CORE_DEAD") return "dead";
  if (group === "coordinator" && n === 1 && (f0.byteLength === 1 || ascii(f0) === "READY"))
    return "raw-frame";
  // ROUTER-side views: [identity(2 B), ...]
  if (n >= 2 && f0.byteLength === 2) {
    const rest = frames.slice(1);
    if (rest.length === 1) {
      const p = rest[0]!;
      if (mapStartsWith(p, "status")) return "handshake-status";
      if (mapStartsWith(p, "addresses")) return "handshake-init";
      if (mapStartsWith(p, "max_model_len")) return "registration";
      return "unknown";
    }
    const type = rest[0]!;
    if (type.byteLength !== 1) return "unknown";
    if (type[0] === 0) return "add";
    if (type[0] === 1) return "abort";
    if (type[0] === 3) return "utility";
    return "unknown";
  }
  if (n === 2 && f0.byteLength === 1 && f0[0] === 2) return "start-dp-wave";
  const b = f0[0]!;
  if (isArray(b)) {
    if (group === "coordinator" && b === 0x93) return "coordinator-publish";
    if (group === "coordinator" && b === 0x92) return "frontend-wakeup";
    const first = firstElementKind(f0);
    if (first === "str") return "add";
    if (first === "int") return "outputs";
    return "unknown";
  }
  if (isMap(b)) {
    if (mapStartsWith(f0, "status")) return "handshake-status";
    if (mapStartsWith(f0, "addresses")) return "handshake-init";
    if (mapStartsWith(f0, "max_model_len")) return "registration";
    if (group === "notifications" || group?.startsWith("python_compat")) return "value";
  }
  return "unknown";
}

/** msgspec's own verdict on a typed decode, when the vector records one. */
export function msgspecVerdict(v: Vector): "ok" | "error" | undefined {
  if (v.decode_check === undefined) return undefined;
  return /:\s*ok\b/.test(v.decode_check) ? "ok" : "error";
}

/** Vectors encoded with the python_compat.py MIRROR structs (not vLLM's real SamplingParams). */
export function usesMirrorStructs(v: Vector): boolean {
  return v.name.startsWith("python_compat") || /mirror/i.test(v.provenance_note);
}
