// The frame-shape helper (test/helpers/frame-shapes.ts): its shapes are what their names say, it catches a
// decoder whose result depends on the frame's shape, and no decoder test gets around it.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/index.js";
import {
  decodeInShapes,
  decodeValue,
  FRAME_SHAPES,
  FrameShapeMismatch,
  isDecoderName,
  PLAIN_SHAPE,
  PUBLIC_DECODERS,
  WRAPPED_DECODERS,
} from "./helpers/frame-shapes.js";

const shape = (name: string) => FRAME_SHAPES.find((s) => s.name === name)!;
const message = [
  Uint8Array.of(0),
  Uint8Array.from({ length: 300 }, (_, i) => i & 0xff),
  new Uint8Array(0),
  // Larger than Node's pool takes (half of Buffer.poolSize: 8 KiB on Node 20, 64 KiB on Node 24).
  Uint8Array.from({ length: Buffer.poolSize }, (_, i) => (i * 7) & 0xff),
];
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");

describe("frame shapes", () => {
  it("are a plain Uint8Array, a pooled Buffer, a Buffer of its own and unaligned views at offsets 1 to 7", () => {
    expect(FRAME_SHAPES.map((s) => s.name)).toEqual([
      "Uint8Array",
      "Buffer (pooled)",
      "Buffer (own memory)",
      ...[1, 2, 3, 4, 5, 6, 7].map((k) => `unaligned view (+${k})`),
    ]);
    expect(FRAME_SHAPES[0]).toBe(PLAIN_SHAPE);
  });

  it.each(FRAME_SHAPES.map((s) => [s.name, s] as const))("%s keeps every frame's bytes", (_name, s) => {
    expect(s.make(message).map(hex)).toEqual(message.map(hex));
  });

  it("plain: a Uint8Array (not a subclass) owning exactly its bytes", () => {
    for (const f of PLAIN_SHAPE.make([Buffer.from([1, 2, 3]), new Uint8Array(9).subarray(2)])) {
      expect(Object.getPrototypeOf(f)).toBe(Uint8Array.prototype);
      expect([f.byteOffset, f.buffer.byteLength]).toEqual([0, f.byteLength]);
    }
  });

  it("pooled: small frames live inside Node's shared Buffer pool at a non-zero offset", () => {
    const [small, mid, empty, large] = shape("Buffer (pooled)").make(message);
    for (const f of [small!, mid!]) {
      expect(f).toBeInstanceOf(Buffer);
      expect(f.buffer.byteLength).toBe(Buffer.poolSize);
      expect(f.byteOffset).not.toBe(0);
    }
    expect(empty!.byteLength).toBe(0);
    // Too large for the pool: still a view into a larger slab, as a pool would give.
    expect(large).toBeInstanceOf(Buffer);
    expect(large!.byteOffset).toBe(8);
    expect(large!.buffer.byteLength).toBeGreaterThan(large!.byteLength);
  });

  it("own memory: a Buffer whose ArrayBuffer is exactly the frame (what zeromq.js delivers)", () => {
    for (const f of shape("Buffer (own memory)").make(message)) {
      expect(f).toBeInstanceOf(Buffer);
      expect([f.byteOffset, f.buffer.byteLength]).toEqual([0, f.byteLength]);
    }
  });

  it.each([1, 2, 3, 4, 5, 6, 7])("unaligned +%d: views into one ArrayBuffer, surrounded by 0xc1", (k) => {
    const frames = shape(`unaligned view (+${k})`).make(message);
    const slab = frames[0]!.buffer;
    for (const f of frames) {
      expect(Object.getPrototypeOf(f)).toBe(Uint8Array.prototype);
      expect(f.buffer).toBe(slab);
      expect(f.byteOffset % 8).toBe(k);
      expect(new Uint8Array(slab)[f.byteOffset - 1]).toBe(0xc1);
      expect(new Uint8Array(slab)[f.byteOffset + f.byteLength]).toBe(0xc1);
    }
  });
});

describe("decodeInShapes", () => {
  it("fails a decoder that reads a copy made with slice() from offset 0 (the tensor bug that corrupted logprobs read from received Buffers)", () => {
    const buggy = (frames: Uint8Array[]) => {
      const bytes = frames[0]!.subarray(1, 5);
      return [...new Uint8Array(bytes.slice().buffer, 0, 4)];
    };
    expect(() => decodeInShapes([Uint8Array.of(9, 1, 2, 3, 4)], buggy)).toThrow(FrameShapeMismatch);
    expect(() => decodeInShapes([Uint8Array.of(9, 1, 2, 3, 4)], buggy)).toThrow(/"Buffer \(pooled\)"/);
  });

  it("fails a decoder that returns Buffers for Buffer frames", () => {
    expect(() => decodeInShapes([Uint8Array.of(1, 2)], (f) => f[0]!.subarray(1))).toThrow(
      /Uint8Array vs Buffer/,
    );
  });

  it("fails a decoder that reads the frame's whole ArrayBuffer", () => {
    expect(() => decodeInShapes([Uint8Array.of(1, 2)], (f) => new Uint8Array(f[0]!.buffer)[0])).toThrow(
      FrameShapeMismatch,
    );
  });

  it("fails when only some shapes throw, or throw differently", () => {
    const throwsOnBuffers = (f: Uint8Array[]) => {
      if (Buffer.isBuffer(f[0])) throw new ProtocolError({ struct: "x", detail: "no" });
      return 1;
    };
    expect(() => decodeInShapes([Uint8Array.of(1)], throwsOnBuffers)).toThrow(/it threw ProtocolError/);
    const byOffset = (f: Uint8Array[]) => {
      throw new ProtocolError({ struct: "x", detail: `offset ${f[0]!.byteOffset}` });
    };
    expect(() => decodeInShapes([Uint8Array.of(1)], byOffset)).toThrow(FrameShapeMismatch);
  });

  it("returns the value, or rethrows the error, every shape agreed on", () => {
    expect(decodeValue(Uint8Array.of(0x92, 0x01, 0xc4, 0x01, 0x07))).toEqual([1, Uint8Array.of(7)]);
    expect(() => decodeValue(Uint8Array.of(0x92, 0x01))).toThrow(ProtocolError);
  });
});

// ---- the guard: decoder tests go through the helper ----------------------------------------------

const testRoot = fileURLToPath(new URL(".", import.meta.url));
const HELPER = join("helpers", "frame-shapes.ts");
/** Internal entry points that read frames or bytes, besides the public decoders. */
const INTERNAL_READERS = ["decodeFrames", "decodeCustom", "Reader"];

function testSources(dir = testRoot): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testSources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** How `source` reaches a decoder without the helper: one line per offending import. */
export function bypasses(source: string): string[] {
  const found: string[] = [];
  const imports = /import\s+(?:type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/g;
  for (const [, clause, specifier] of source.matchAll(imports)) {
    if (!specifier!.includes("/src/") && !specifier!.endsWith("/src")) continue;
    const namespace = /\*\s+as\s+(\w+)/.exec(clause!);
    // Struct field tables are data, not decoders; any other module's namespace carries decoders.
    if (namespace !== null && !specifier!.includes("/src/structs/")) {
      found.push(`import * as ${namespace[1]} from "${specifier}"`);
    }
    const named = /\{([\s\S]*)\}/.exec(clause!)?.[1] ?? "";
    for (const item of named.split(",")) {
      const name = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0]!;
      if (isDecoderName(name) || INTERNAL_READERS.includes(name)) found.push(`${name} from "${specifier}"`);
    }
  }
  for (const [call] of source.matchAll(/\b(?:import|require)\(\s*["'][^"']*\/src\b[^"']*["']\s*\)/g)) {
    found.push(call);
  }
  return found;
}

describe("no decoder test bypasses the frame-shape helper", () => {
  it("the helper wraps every decoder the package exports", () => {
    expect(PUBLIC_DECODERS.length).toBeGreaterThanOrEqual(12);
    expect(PUBLIC_DECODERS.filter((name) => !WRAPPED_DECODERS.includes(name))).toEqual([]);
  });

  it("the guard recognises the ways around the helper", () => {
    // Specifiers spliced in, so that this file's own source does not contain the imports it tests.
    const index = ["..", "src", "index.js"].join("/");
    const deep = ["..", "..", "src", "msgpack", "reader.js"].join("/");
    expect(bypasses(`import { decodeValue } from "${index}";`)).toHaveLength(1);
    expect(bypasses(`import {\n  Float64,\n  decodeOutputMessage as d,\n} from "${index}";`)).toEqual([
      `decodeOutputMessage from "${index}"`,
    ]);
    expect(
      bypasses(`import { decodeFrames } from "${index.replace("index", "messages/run")}";`),
    ).toHaveLength(1);
    expect(bypasses(`import { Reader } from "${deep}";`)).toHaveLength(1);
    expect(bypasses(`import * as p from "${index}";`)).toHaveLength(1);
    expect(bypasses(`const p = await import("${index}");`)).toHaveLength(1);
    expect(bypasses(`import * as output from "${index.replace("index", "structs/output")}";`)).toEqual([]);
    expect(bypasses(`import { encodeValue, ProtocolError } from "${index}";`)).toEqual([]);
    expect(bypasses(`import { decodeValue } from "./helpers/frame-shapes.js";`)).toEqual([]);
  });

  it("no test source imports a decoder from src/ except the helper", () => {
    const files = testSources();
    const names = files.map((f) => relative(testRoot, f));
    // The scan sees the decoder suites (a wrong root would pass vacuously).
    for (const suite of ["vectors", "properties", "fuzz", "tensors", "messages", "msgspec-rules"]) {
      expect(names).toContain(`${suite}.test.ts`);
    }
    const offenders = files
      .filter((f) => relative(testRoot, f) !== HELPER)
      .flatMap((f) => bypasses(readFileSync(f, "utf8")).map((b) => `${relative(testRoot, f)}: ${b}`));
    expect(offenders).toEqual([]);
  });
});
