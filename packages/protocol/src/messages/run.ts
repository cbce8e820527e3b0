// Entry-point plumbing: run an encode/decode, turning internal faults (and anything unexpected) into
// a ProtocolError that names the struct and the field path.
import { ProtocolError } from "../errors/classes.js";
import { describeForeign, WireFault } from "../msgpack/fault.js";
import { Reader } from "../msgpack/reader.js";
import { sharedWriter, type Writer } from "../msgpack/writer.js";
import type { Codec } from "../schema/codec.js";
import { isVllmVersion, PINNED_VERSION, type VllmVersion } from "../versions/versions.js";

export const DEFAULT_AUX_THRESHOLD = 256;

export interface EncodeOptions {
  /** Arrays/tensors of at least this many bytes go to aux frames (VLLM_MSGPACK_ZERO_COPY_THRESHOLD; default 256). */
  auxThreshold?: number;
  /**
   * Write the struct layouts of this vLLM version (default: the pinned revision, "main"). Fields the
   * version lacks are dropped when they hold their default; set ones are still sent where that
   * version's decoder skips them (trailing array elements, map keys), and fail to encode where it
   * has no slot for them (a field inserted mid-array, like EngineCoreOutput.ec_transfer_params).
   */
  vllmVersion?: VllmVersion;
}

function toProtocolError(err: unknown, struct: string, direction: "decode" | "encode"): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (err instanceof WireFault) {
    const field = err.path.length > 0 ? struct + err.path.join("") : undefined;
    return new ProtocolError({ struct, field, detail: err.detail, direction });
  }
  return new ProtocolError({ struct, detail: describeForeign(err), direction });
}

/** Decode one top-level value from `frames` (frame 0 = payload, the rest = aux frames). */
export function decodeFrames<T>(codec: Codec<T, unknown>, frames: readonly Uint8Array[], struct: string): T {
  try {
    const r = new Reader(frames);
    const value = codec.decode(r);
    r.finish();
    return value;
  } catch (err) {
    throw toProtocolError(err, struct, "decode");
  }
}

/** Run `fn` with a decoder-style error mapping (for hand-written message shapes). */
export function decodeCustom<T>(frames: readonly Uint8Array[], struct: string, fn: (r: Reader) => T): T {
  try {
    const r = new Reader(frames);
    const value = fn(r);
    r.finish();
    return value;
  } catch (err) {
    throw toProtocolError(err, struct, "decode");
  }
}

/** Encode one top-level value; returns `[main, ...aux]`. */
export function encodeFrames<I>(
  codec: Codec<unknown, I>,
  value: I,
  struct: string,
  options?: EncodeOptions,
): Uint8Array[] {
  return encodeCustom(struct, options, (w) => codec.encode(w, value));
}

export function encodeCustom(
  struct: string,
  options: EncodeOptions | undefined,
  fn: (w: Writer) => void,
): Uint8Array[] {
  const w = sharedWriter;
  const threshold = options?.auxThreshold ?? DEFAULT_AUX_THRESHOLD;
  const target = options?.vllmVersion ?? PINNED_VERSION;
  w.reset(threshold);
  try {
    if (!isVllmVersion(target)) {
      throw new WireFault(
        `unknown vllmVersion ${JSON.stringify(target)} (expected one of the VLLM_VERSIONS ids)`,
      );
    }
    w.targetVersion = target;
    fn(w);
    const frames = [w.finish(), ...w.aux];
    w.aux = [];
    return frames;
  } catch (err) {
    w.aux = [];
    throw toProtocolError(err, struct, "encode");
  }
}

export function encodeSingle<I>(
  codec: Codec<unknown, I>,
  value: I,
  struct: string,
  vllmVersion?: VllmVersion,
): Uint8Array {
  const options: EncodeOptions = { auxThreshold: Number.POSITIVE_INFINITY };
  if (vllmVersion !== undefined) options.vllmVersion = vllmVersion;
  return encodeFrames(codec, value, struct, options)[0]!;
}
