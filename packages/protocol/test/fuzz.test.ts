// Fuzz: random, truncated and mutated messages (mutations of the vector frames and of encoder output)
// through every decoder, in every frame shape. The only acceptable failure is a ProtocolError — no
// RangeError/TypeError, no crash, no hang — and the frame shape must never change the outcome. Seeded, so a
// failure is reproducible.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeAddRequest, encodeEngineCoreOutputs, ProtocolError } from "../src/index.js";
import { EngineCoreOutputsCodec } from "../src/structs/output.js";
import { EngineCoreRequestCodec } from "../src/structs/request.js";
import { arbitraryFor } from "./helpers/arbitraries.js";
import { decodersFor, FRAME_SHAPES, PLAIN_SHAPE, type ShapedDecoders } from "./helpers/frame-shapes.js";
import { framesOf, vectorsFile } from "./helpers/vectors.js";

type Decode = (d: ShapedDecoders, frames: Uint8Array[]) => unknown;
const payload = (f: Uint8Array[]) => f[0] ?? new Uint8Array(0);

const decoders: [string, Decode][] = [
  ["decodeOutputMessage", (d, f) => d.decodeOutputMessage(f)],
  ["decodeInputMessage", (d, f) => d.decodeInputMessage(f)],
  ["decodeInputMessage(ADD)", (d, f) => d.decodeInputMessage([Uint8Array.of(0), ...f])],
  ["decodeInputMessage(UTILITY)", (d, f) => d.decodeInputMessage([Uint8Array.of(3), ...f])],
  ["decodeInputMessage(ABORT)", (d, f) => d.decodeInputMessage([Uint8Array.of(1), ...f])],
  ["decodeHandshakeStatus", (d, f) => d.decodeHandshakeStatus(payload(f))],
  ["decodeHandshakeInit", (d, f) => d.decodeHandshakeInit(payload(f))],
  ["decodeReadyResponse", (d, f) => d.decodeReadyResponse(payload(f))],
  ["decodeValue", (d, f) => d.decodeValue(payload(f))],
  ["decodeCoordinatorPublish", (d, f) => d.decodeCoordinatorPublish(payload(f))],
  ["decodeFrontendWakeup", (d, f) => d.decodeFrontendWakeup(payload(f))],
  ["decodeStartDpWavePayload", (d, f) => d.decodeStartDpWavePayload(payload(f))],
  ["engineIndexFromIdentity", (d, f) => d.engineIndexFromIdentity(payload(f))],
];

/**
 * Every shape on every message would be 10× the decodes; instead each message is decoded as a plain
 * Uint8Array (the reference) and in one other shape, taken in turn, so every shape sees a tenth of the
 * corpus and any divergence from the reference fails.
 */
const OTHER_SHAPES = FRAME_SHAPES.filter((s) => s !== PLAIN_SHAPE);
const PAIRS = OTHER_SHAPES.map((shape) => decodersFor([PLAIN_SHAPE, shape]));
const ALL_SHAPES = decodersFor(FRAME_SHAPES);

/** xorshift32: tiny, fast and seeded. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
  return { next, int: (n: number) => next() % n, pick: <T>(xs: readonly T[]) => xs[next() % xs.length]! };
}

const INTERESTING = [
  0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc6, 0xc7, 0xc9, 0xca, 0xcb,
  0xcc, 0xcf, 0xd3, 0xd4, 0xd8, 0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff,
];

/** Payload-bearing messages of the vectors, without ROUTER identity / type frames. */
function seedMessages(): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  for (const v of vectorsFile.vectors) {
    const frames = framesOf(v);
    out.push(frames);
    if (frames.length >= 3 && frames[0]!.byteLength === 2) out.push(frames.slice(2));
    if (frames.length === 2 && frames[0]!.byteLength === 2) out.push(frames.slice(1));
  }
  // Encoder output with tensors in aux frames, nested structs and opaque values.
  const reqs = fc.sample(arbitraryFor(EngineCoreRequestCodec), { seed: 7, numRuns: 40 });
  for (const r of reqs) out.push(encodeAddRequest(r as never, { auxThreshold: 16 }).slice(1));
  const outs = fc.sample(arbitraryFor(EngineCoreOutputsCodec), { seed: 8, numRuns: 40 });
  for (const o of outs) out.push(encodeEngineCoreOutputs(o as never, { auxThreshold: 16 }));
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const randomBytes = (r: ReturnType<typeof rng>, n: number) =>
  Uint8Array.from({ length: n }, () => r.int(256));

function mutate(r: ReturnType<typeof rng>, msg: Uint8Array[]): Uint8Array[] {
  const frames: Uint8Array[] = msg.map((f) => f.slice());
  const fi = r.int(frames.length);
  let f: Uint8Array = frames[fi]!;
  const op = r.int(10);
  const at = f.length === 0 ? 0 : r.int(f.length);
  switch (op) {
    case 0: // flip bits
      for (let k = 1 + r.int(3); k > 0 && f.length > 0; k--) f[r.int(f.length)]! ^= 1 << r.int(8);
      break;
    case 1: // interesting byte
      if (f.length > 0) f[at] = r.pick(INTERESTING);
      break;
    case 2: // truncate
      f = f.subarray(0, at);
      break;
    case 3: // insert random bytes
      f = concat(f.subarray(0, at), randomBytes(r, 1 + r.int(8)), f.subarray(at));
      break;
    case 4: // delete a range
      f = concat(f.subarray(0, at), f.subarray(at + 1 + r.int(16)));
      break;
    case 5: // duplicate a range
      f = concat(f.subarray(0, at + r.int(32)), f.subarray(at));
      break;
    case 6: // append garbage
      f = concat(f, randomBytes(r, 1 + r.int(4)));
      break;
    case 7: // drop or add an aux frame
      if (frames.length > 1 && r.int(2) === 0) frames.pop();
      else frames.push(randomBytes(r, r.int(64)));
      break;
    case 8: // random frame
      f = randomBytes(r, r.int(48));
      break;
    default: // big length field: array32/map32/str32 header claiming a lot
      if (f.length > 0) {
        f[at] = r.pick([0xdd, 0xdf, 0xdb, 0xc6, 0xc9]);
        if (at + 4 < f.length) f[at + 1] = 0xff;
      }
  }
  frames[fi] = f;
  return frames;
}

const TOTAL = 40_000;

/** The mutated corpus, built once: every decoder sees the same messages (twice each: two frame shapes). */
function buildCorpus(): Uint8Array[][] {
  const seeds = seedMessages();
  const r = rng(0xc67fe497);
  const corpus: Uint8Array[][] = [];
  for (let i = 0; i < TOTAL; i++) {
    let msg = mutate(r, r.pick(seeds));
    if (r.int(4) === 0) msg = mutate(r, msg); // sometimes stack two mutations
    corpus.push(msg);
  }
  return corpus;
}

describe("fuzz", () => {
  const corpus = buildCorpus();

  it.each(decoders)(
    "%s: 40k mutated messages × 2 frame shapes, only ProtocolError escapes",
    (name, decode) => {
      let accepted = 0;
      let rejected = 0;
      const failures: string[] = [];
      for (let i = 0; i < corpus.length; i++) {
        const msg = corpus[i]!;
        try {
          decode(PAIRS[i % PAIRS.length]!, msg);
          accepted++;
        } catch (err) {
          // A ProtocolError that merely wraps a RangeError/TypeError is an internal bug the safety net
          // caught; the decoders must detect every malformation themselves.
          const wrapped = err instanceof ProtocolError && err.detail.startsWith("unexpected ");
          if (err instanceof ProtocolError && !wrapped) rejected++;
          else if (failures.length < 5) {
            const hex = msg.map((m) => Buffer.from(m).toString("hex")).join(",");
            failures.push(
              `${name}: ${(err as Error)?.name}: ${(err as Error)?.message} on ${hex.slice(0, 400)}`,
            );
          } else {
            failures.push("(more)");
          }
        }
      }
      expect(failures).toEqual([]);
      expect(accepted + rejected).toBe(TOTAL);
    },
  );

  it("the corpus is meaningful: seeds decode, mutations are mostly rejected but not all", () => {
    const seeds = seedMessages();
    const decodable = seeds.filter((msg) =>
      decoders.some(([, d]) => {
        try {
          d(ALL_SHAPES, msg);
          return true;
        } catch {
          return false;
        }
      }),
    );
    expect(decodable.length / seeds.length).toBeGreaterThan(0.9);
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const msg = corpus[i]!;
      const d = PAIRS[i % PAIRS.length]!;
      try {
        d.decodeOutputMessage(msg);
        accepted++;
      } catch {}
      try {
        d.decodeInputMessage([Uint8Array.of(0), ...msg]);
        accepted++;
      } catch {}
    }
    expect(accepted).toBeGreaterThan(50);
  });
});
