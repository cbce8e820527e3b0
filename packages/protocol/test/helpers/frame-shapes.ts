// The frame shapes every decoder test runs on. zeromq.js hands received frames over as Node Buffers, which
// differ from a plain Uint8Array in ways a decoder can trip over (`slice()` is a view, `.buffer` may be
// Node's shared Buffer pool, `subarray()` keeps the subclass), and frames that users cut out of larger
// buffers sit at arbitrary offsets. Tests built only from fresh `Uint8Array`s hid a tensor bug that
// corrupted every logprob received from a socket, so:
//
//   - FRAME_SHAPES turns a message into the same bytes as a plain Uint8Array, as pooled and as non-pooled
//     Node Buffers, and as unaligned views (byte offsets 1 through 7) into one larger ArrayBuffer;
//   - the decoders exported here have the public decoders' names and signatures, run the message in every
//     shape and fail unless every shape gives the same value (or the same error), then return it;
//   - test/frame-shapes.test.ts fails when a test imports a decoder from src/ instead of from here.
//
// Bytes around a frame inside a larger buffer are filled with 0xc1 (never valid msgpack), so a decoder
// that reads outside its frame gets garbage, never plausible data.
import * as protocol from "../../src/index.js";
import { decodeFrames as decodeFramesOnce } from "../../src/messages/run.js";
import type { Codec } from "../../src/schema/codec.js";

export interface FrameShape {
  readonly name: string;
  /** The same bytes in this shape, for every frame of one message. */
  make(frames: readonly Uint8Array[]): Uint8Array[];
}

const OUTSIDE = 0xc1;

/** A Buffer over a larger slab of its own (offset 8, filler around): used where Node's pool cannot hold the frame. */
function slabBuffer(bytes: Uint8Array): Buffer {
  const slab = Buffer.allocUnsafeSlow(bytes.byteLength + 16).fill(OUTSIDE);
  const view = slab.subarray(8, 8 + bytes.byteLength);
  view.set(bytes);
  return view;
}

/**
 * A copy in Node's Buffer pool (`Buffer.from` of fewer than poolSize/2 bytes): `.buffer` is the pool's slab
 * (Buffer.poolSize: 8 KiB on Node 20, 64 KiB on Node 24) shared with other allocations and `byteOffset`
 * is not 0. Larger frames get a slab of their own.
 */
function pooledBuffer(bytes: Uint8Array): Buffer {
  if (bytes.byteLength === 0) return Buffer.from(bytes);
  if (bytes.byteLength >= Buffer.poolSize >>> 1) return slabBuffer(bytes);
  for (let attempt = 0; attempt < 3; attempt++) {
    const b = Buffer.from(bytes);
    // Offset 0 only when this allocation opened a fresh pool; the next one cannot.
    if (b.byteOffset !== 0) return b;
  }
  throw new Error("internal: could not place a frame inside Node's Buffer pool");
}

/** What zeromq.js delivers: a Buffer owning exactly its bytes (offset 0, its own ArrayBuffer). */
function ownBuffer(bytes: Uint8Array): Buffer {
  const b = Buffer.allocUnsafeSlow(bytes.byteLength);
  b.set(bytes);
  return b;
}

/** Every frame of the message inside one ArrayBuffer, each starting at an offset ≡ `k` (mod 8). */
function unalignedViews(frames: readonly Uint8Array[], k: number): Uint8Array[] {
  const offsets: number[] = [];
  let size = 0;
  for (const f of frames) {
    const at = Math.ceil((size + 1) / 8) * 8 + k;
    offsets.push(at);
    size = at + f.byteLength;
  }
  const slab = new Uint8Array(size + 8).fill(OUTSIDE);
  return frames.map((f, i) => {
    const view = slab.subarray(offsets[i]!, offsets[i]! + f.byteLength);
    view.set(f);
    return view;
  });
}

/** A plain Uint8Array owning exactly its bytes (the frame itself when it already is one). */
function plainArray(bytes: Uint8Array): Uint8Array {
  const own =
    Object.getPrototypeOf(bytes) === Uint8Array.prototype &&
    bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength &&
    bytes.buffer instanceof ArrayBuffer;
  return own ? bytes : new Uint8Array(bytes);
}

export const PLAIN_SHAPE: FrameShape = { name: "Uint8Array", make: (frames) => frames.map(plainArray) };

export const FRAME_SHAPES: readonly FrameShape[] = [
  PLAIN_SHAPE,
  { name: "Buffer (pooled)", make: (frames) => frames.map(pooledBuffer) },
  { name: "Buffer (own memory)", make: (frames) => frames.map(ownBuffer) },
  ...[1, 2, 3, 4, 5, 6, 7].map(
    (k): FrameShape => ({ name: `unaligned view (+${k})`, make: (frames) => unalignedViews(frames, k) }),
  ),
];

/** Raised when two shapes of the same message decode differently: a decoder depends on the frame's shape. */
export class FrameShapeMismatch extends Error {
  override readonly name = "FrameShapeMismatch";
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * The first difference between two decoded values, or undefined. Strict: same prototypes (a Buffer is not a
 * Uint8Array), same key order, typed arrays byte for byte, NaN equal to NaN, 0 different from -0.
 */
export function firstDifference(a: unknown, b: unknown, path = "value"): string | undefined {
  const d = difference(a, b);
  return d === undefined ? undefined : `${path}${d}`;
}

/** The difference as "<path below here>: <what>"; paths are only built for a difference (this runs a lot). */
function difference(a: unknown, b: unknown): string | undefined {
  if (Object.is(a, b)) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return `: ${describe(a)} vs ${describe(b)}`;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) {
    return `: ${a.constructor?.name} vs ${b.constructor?.name}`;
  }
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const bv = b as ArrayBufferView;
    const y = new Uint8Array(bv.buffer, bv.byteOffset, bv.byteLength);
    if (x.length !== y.length) return `: ${x.length} bytes vs ${y.length} bytes`;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `: byte ${i} differs`;
    return undefined;
  }
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return `: length ${a.length} vs ${bb.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], bb[i]);
      if (d !== undefined) return `[${i}]${d}`;
    }
    return undefined;
  }
  if (a instanceof Map || a instanceof Set) {
    const d = difference([...a.entries()], [...(b as Map<unknown, unknown>).entries()]);
    return d === undefined ? undefined : `(entries)${d}`;
  }
  if (a instanceof Error) {
    const e = b as Error;
    if (a.name !== e.name || a.message !== e.message) return `: "${a.message}" vs "${e.message}"`;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return `: keys [${ka}] vs [${kb}]`;
  for (const k of ka) {
    const d = difference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
    if (d !== undefined) return `.${k}${d}`;
  }
  return undefined;
}

function describe(v: unknown): string {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "object" && v !== null) return v.constructor?.name ?? "object";
  return String(v);
}

/**
 * Decode one message in each of `shapes` (the first is the reference), fail with FrameShapeMismatch unless
 * every shape gives the same value or the same error, and return the reference's value (or throw its error).
 */
export function decodeInShapes<T>(
  frames: readonly Uint8Array[],
  decode: (frames: Uint8Array[]) => T,
  shapes: readonly FrameShape[] = FRAME_SHAPES,
): T {
  let reference: Outcome<T> | undefined;
  for (const shape of shapes) {
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: decode(shape.make(frames)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    if (reference === undefined) {
      reference = outcome;
      continue;
    }
    const diff =
      reference.ok && outcome.ok
        ? firstDifference(reference.value, outcome.value)
        : !reference.ok && !outcome.ok
          ? firstDifference(reference.error, outcome.error, "error")
          : reference.ok
            ? `it threw ${describeError((outcome as { error: unknown }).error)}`
            : `it decoded, the reference threw ${describeError(reference.error)}`;
    if (diff !== undefined) {
      throw new FrameShapeMismatch(
        `decoding differs between frame shapes "${shapes[0]!.name}" and "${shape.name}": ${diff}`,
      );
    }
  }
  if (reference === undefined) throw new Error("decodeInShapes needs at least one shape");
  if (!reference.ok) throw reference.error;
  return reference.value;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

// ---- the public decoders, one message per call, taking frames as the public API does ----

const frameDecoders = {
  decodeOutputMessage: (f: Uint8Array[]) => protocol.decodeOutputMessage(f),
  decodeEngineCoreOutputs: (f: Uint8Array[]) => protocol.decodeEngineCoreOutputs(f),
  decodeInputMessage: (f: Uint8Array[]) => protocol.decodeInputMessage(f),
  isEngineCoreDead: (f: Uint8Array[]) => protocol.isEngineCoreDead(f),
};

const payloadDecoders = {
  decodeHandshakeStatus: (p: Uint8Array) => protocol.decodeHandshakeStatus(p),
  decodeHandshakeInit: (p: Uint8Array) => protocol.decodeHandshakeInit(p),
  decodeReadyResponse: (p: Uint8Array) => protocol.decodeReadyResponse(p),
  decodeValue: (p: Uint8Array) => protocol.decodeValue(p),
  decodeCoordinatorPublish: (p: Uint8Array) => protocol.decodeCoordinatorPublish(p),
  decodeFrontendWakeup: (p: Uint8Array) => protocol.decodeFrontendWakeup(p),
  decodeStartDpWavePayload: (p: Uint8Array) => protocol.decodeStartDpWavePayload(p),
  engineIndexFromIdentity: (p: Uint8Array) => protocol.engineIndexFromIdentity(p),
};

type FrameDecoders = typeof frameDecoders;
type PayloadDecoders = typeof payloadDecoders;
export type DecoderName = keyof FrameDecoders | keyof PayloadDecoders;

export type ShapedDecoders = {
  [K in keyof FrameDecoders]: (frames: readonly Uint8Array[]) => ReturnType<FrameDecoders[K]>;
} & {
  [K in keyof PayloadDecoders]: (payload: Uint8Array) => ReturnType<PayloadDecoders[K]>;
} & {
  /** The internal entry point (a struct codec over a whole message), for the per-struct round trips. */
  decodeFrames<T>(codec: Codec<T, unknown>, frames: readonly Uint8Array[], struct: string): T;
  decodeOutputMessageKnowing(
    frames: readonly Uint8Array[],
    slots: Int32Array,
    known: readonly (protocol.KnownRequest | undefined)[],
  ): protocol.OutputMessage;
};

/** Every decoder, run on `shapes` (the first one is the reference). */
export function decodersFor(shapes: readonly FrameShape[]): ShapedDecoders {
  const out: Record<string, unknown> = {};
  for (const [name, decode] of Object.entries(frameDecoders)) {
    out[name] = (frames: readonly Uint8Array[]) => decodeInShapes(frames, decode as never, shapes);
  }
  for (const [name, decode] of Object.entries(payloadDecoders)) {
    out[name] = (payload: Uint8Array) =>
      decodeInShapes([payload], (f) => (decode as (p: Uint8Array) => unknown)(f[0]!), shapes);
  }
  out.decodeFrames = <T>(codec: Codec<T, unknown>, frames: readonly Uint8Array[], struct: string) =>
    decodeInShapes(frames, (f) => decodeFramesOnce(codec, f, struct), shapes);
  out.decodeOutputMessageKnowing = (
    frames: readonly Uint8Array[],
    slots: Int32Array,
    known: readonly (protocol.KnownRequest | undefined)[],
  ) => decodeInShapes(frames, (f) => protocol.decodeOutputMessageKnowing(f, slots, known), shapes);
  return out as ShapedDecoders;
}

const everyShape = decodersFor(FRAME_SHAPES);

export const {
  decodeOutputMessage,
  decodeEngineCoreOutputs,
  decodeInputMessage,
  isEngineCoreDead,
  decodeHandshakeStatus,
  decodeHandshakeInit,
  decodeReadyResponse,
  decodeValue,
  decodeCoordinatorPublish,
  decodeFrontendWakeup,
  decodeStartDpWavePayload,
  engineIndexFromIdentity,
  decodeFrames,
  decodeOutputMessageKnowing,
} = everyShape;

/** Names of the public decoders this module wraps. */
export const WRAPPED_DECODERS: readonly string[] = [
  ...Object.keys(frameDecoders),
  ...Object.keys(payloadDecoders),
  "decodeOutputMessageKnowing",
];

/** An export of the package that reads frames: what a test must not call except through this module. */
export const isDecoderName = (name: string): boolean =>
  /^decode[A-Z]/.test(name) || name === "engineIndexFromIdentity" || name === "isEngineCoreDead";

/** Every decoder the package exports (the guard test checks each one is wrapped here). */
export const PUBLIC_DECODERS: readonly string[] = Object.keys(protocol).filter(isDecoderName);

/**
 * For assertions about each shape (decoded values, zero-copy views): decode a message in every shape and
 * return each shape's frames and value. No cross-shape comparison: the caller asserts on every entry.
 */
export function decodeEachShape<K extends keyof FrameDecoders>(
  name: K,
  frames: readonly Uint8Array[],
): { shape: FrameShape; frames: Uint8Array[]; value: ReturnType<FrameDecoders[K]> }[] {
  const decode = frameDecoders[name] as (f: Uint8Array[]) => ReturnType<FrameDecoders[K]>;
  return FRAME_SHAPES.map((shape) => {
    const shaped = shape.make(frames);
    return { shape, frames: shaped, value: decode(shaped) };
  });
}
