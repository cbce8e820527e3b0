// asciiString: the short-string fast path of every str the codec reads (request ids, keys, dtypes). Its two
// ways (fromCharCode chunks; Node's latin1 slice from 24 bytes) must give the string TextDecoder gives for
// ASCII bytes, and null as soon as one byte is not ASCII, at any length and position, in any frame shape.
import { describe, expect, it } from "vitest";
import { asciiString } from "../src/msgpack/reader.js"; // not a decoder: one string from bytes
import { FRAME_SHAPES } from "./helpers/frame-shapes.js";

const utf8 = new TextDecoder();

describe("asciiString", () => {
  it("equals TextDecoder on ASCII bytes of every length 0–100, in every frame shape", () => {
    for (let n = 0; n <= 100; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => 32 + ((i * 7 + n) % 95));
      const expected = utf8.decode(bytes);
      for (const shape of FRAME_SHAPES) {
        const [framed] = shape.make([bytes]);
        expect(asciiString(framed!, 0, n), `${shape.name}, ${n} bytes`).toBe(expected);
      }
      // A window inside a larger buffer.
      const wide = new Uint8Array(n + 10).fill(0xff);
      wide.set(bytes, 5);
      expect(asciiString(wide, 5, 5 + n)).toBe(expected);
    }
  });

  it("returns null when any one byte is not ASCII", () => {
    for (let n = 1; n <= 70; n++) {
      for (let at = 0; at < n; at++) {
        const bytes = new Uint8Array(n).fill(0x61);
        bytes[at] = 0x80 + (at % 0x7f);
        expect(asciiString(bytes, 0, n), `${n} bytes, non-ASCII at ${at}`).toBeNull();
      }
    }
  });
});
