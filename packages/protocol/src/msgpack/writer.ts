// Schema-agnostic msgpack writer that follows msgspec's choices: smallest int encoding, float64 for
// floats, smallest str/bin/array/map headers, standard ext headers. One instance is reused by every
// encode call (encoding is synchronous and never re-entrant), and `finish` copies the bytes out.
import type { VllmVersion } from "../versions/versions.js";
import { fail } from "./fault.js";

const textEncoder = new TextEncoder();
const TWO_32 = 4294967296;

export class Writer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  /** Aux frames of the message being encoded; index 0 stands for the main buffer. */
  aux: Uint8Array[] = [];
  auxThreshold = 256;
  /** The vLLM version whose struct layouts this message is written in (set per encode call). */
  targetVersion: VllmVersion = "main";

  constructor(initialSize = 16384) {
    this.buf = new Uint8Array(initialSize);
    this.view = new DataView(this.buf.buffer);
  }

  reset(auxThreshold: number): void {
    this.pos = 0;
    this.aux = [];
    this.auxThreshold = auxThreshold;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  nil(): void {
    this.byte(0xc0);
  }

  bool(v: boolean): void {
    this.byte(v ? 0xc3 : 0xc2);
  }

  /** A safe integer (caller checked). */
  int(n: number): void {
    this.ensure(9);
    const buf = this.buf;
    if (n >= 0) {
      if (n < 128) {
        buf[this.pos++] = n;
      } else if (n < 256) {
        buf[this.pos++] = 0xcc;
        buf[this.pos++] = n;
      } else if (n < 65536) {
        buf[this.pos++] = 0xcd;
        this.view.setUint16(this.pos, n);
        this.pos += 2;
      } else if (n < TWO_32) {
        buf[this.pos++] = 0xce;
        this.view.setUint32(this.pos, n);
        this.pos += 4;
      } else {
        buf[this.pos++] = 0xcf;
        this.view.setUint32(this.pos, Math.floor(n / TWO_32));
        this.view.setUint32(this.pos + 4, n >>> 0);
        this.pos += 8;
      }
    } else if (n >= -32) {
      buf[this.pos++] = n & 0xff;
    } else if (n >= -128) {
      buf[this.pos++] = 0xd0;
      this.view.setInt8(this.pos, n);
      this.pos += 1;
    } else if (n >= -32768) {
      buf[this.pos++] = 0xd1;
      this.view.setInt16(this.pos, n);
      this.pos += 2;
    } else if (n >= -2147483648) {
      buf[this.pos++] = 0xd2;
      this.view.setInt32(this.pos, n);
      this.pos += 4;
    } else {
      buf[this.pos++] = 0xd3;
      this.view.setBigInt64(this.pos, BigInt(n));
      this.pos += 8;
    }
  }

  /** A bigint in the int64/uint64 range, written with the smallest encoding. */
  bigint(v: bigint): void {
    if (v >= -9007199254740991n && v <= 9007199254740991n) {
      this.int(Number(v));
      return;
    }
    this.ensure(9);
    if (v > 0n) {
      if (v > 0xffffffffffffffffn) fail(`integer ${v} does not fit in uint64`);
      this.buf[this.pos++] = 0xcf;
      this.view.setBigUint64(this.pos, v);
    } else {
      if (v < -0x8000000000000000n) fail(`integer ${v} does not fit in int64`);
      this.buf[this.pos++] = 0xd3;
      this.view.setBigInt64(this.pos, v);
    }
    this.pos += 8;
  }

  f64(x: number): void {
    this.ensure(9);
    this.buf[this.pos++] = 0xcb;
    this.view.setFloat64(this.pos, x);
    this.pos += 8;
  }

  str(s: string): void {
    const len = s.length;
    // Fast path: short ASCII strings (ids, keys, dtypes) are written byte by byte.
    if (len < 32) {
      this.ensure(1 + len * 3 + 4);
      const buf = this.buf;
      const start = this.pos;
      let p = start + 1;
      let ascii = true;
      for (let i = 0; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          ascii = false;
          break;
        }
        buf[p++] = c;
      }
      if (ascii) {
        buf[start] = 0xa0 | len;
        this.pos = p;
        return;
      }
    }
    const byteLength = utf8Length(s);
    this.ensure(5 + byteLength);
    this.strHeader(byteLength);
    const { written } = textEncoder.encodeInto(s, this.buf.subarray(this.pos, this.pos + byteLength));
    this.pos += written;
  }

  private strHeader(n: number): void {
    const buf = this.buf;
    if (n < 32) {
      buf[this.pos++] = 0xa0 | n;
    } else if (n < 256) {
      buf[this.pos++] = 0xd9;
      buf[this.pos++] = n;
    } else if (n < 65536) {
      buf[this.pos++] = 0xda;
      this.view.setUint16(this.pos, n);
      this.pos += 2;
    } else {
      buf[this.pos++] = 0xdb;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  bin(data: Uint8Array): void {
    const n = data.byteLength;
    this.ensure(5 + n);
    if (n < 256) {
      this.buf[this.pos++] = 0xc4;
      this.buf[this.pos++] = n;
    } else if (n < 65536) {
      this.buf[this.pos++] = 0xc5;
      this.view.setUint16(this.pos, n);
      this.pos += 2;
    } else {
      this.buf[this.pos++] = 0xc6;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
    this.buf.set(data, this.pos);
    this.pos += n;
  }

  ext(type: number, data: Uint8Array): void {
    const n = data.byteLength;
    this.ensure(6 + n);
    const buf = this.buf;
    switch (n) {
      case 1:
        buf[this.pos++] = 0xd4;
        break;
      case 2:
        buf[this.pos++] = 0xd5;
        break;
      case 4:
        buf[this.pos++] = 0xd6;
        break;
      case 8:
        buf[this.pos++] = 0xd7;
        break;
      case 16:
        buf[this.pos++] = 0xd8;
        break;
      default:
        if (n < 256) {
          buf[this.pos++] = 0xc7;
          buf[this.pos++] = n;
        } else if (n < 65536) {
          buf[this.pos++] = 0xc8;
          this.view.setUint16(this.pos, n);
          this.pos += 2;
        } else {
          buf[this.pos++] = 0xc9;
          this.view.setUint32(this.pos, n);
          this.pos += 4;
        }
    }
    this.view.setInt8(this.pos++, type);
    buf.set(data, this.pos);
    this.pos += n;
  }

  arrayHeader(n: number): void {
    this.ensure(5);
    if (n < 16) {
      this.buf[this.pos++] = 0x90 | n;
    } else if (n < 65536) {
      this.buf[this.pos++] = 0xdc;
      this.view.setUint16(this.pos, n);
      this.pos += 2;
    } else {
      this.buf[this.pos++] = 0xdd;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  mapHeader(n: number): void {
    this.ensure(5);
    if (n < 16) {
      this.buf[this.pos++] = 0x80 | n;
    } else if (n < 65536) {
      this.buf[this.pos++] = 0xde;
      this.view.setUint16(this.pos, n);
      this.pos += 2;
    } else {
      this.buf[this.pos++] = 0xdf;
      this.view.setUint32(this.pos, n);
      this.pos += 4;
    }
  }

  /** Write a map16 header with count 0 and return its position for `patchMap16`. */
  map16Placeholder(): number {
    this.ensure(3);
    const at = this.pos;
    this.buf[at] = 0xde;
    this.buf[at + 1] = 0;
    this.buf[at + 2] = 0;
    this.pos += 3;
    return at;
  }

  patchMap16(at: number, count: number): void {
    this.view.setUint16(at + 1, count);
  }

  /** Write a fixmap header with count 0 and return its position for `patchFixmap`. */
  fixmapPlaceholder(): number {
    const at = this.pos;
    this.byte(0x80);
    return at;
  }

  patchFixmap(at: number, count: number): void {
    this.buf[at] = 0x80 | count;
  }
}

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** The shared writer; entry points call `reset` first. */
export const sharedWriter = new Writer();
