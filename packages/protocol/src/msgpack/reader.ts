// Strict msgpack reader used by the schema codecs. Every read checks bounds and the wire type and
// raises a WireFault (never a RangeError); declared lengths are checked against the bytes left so a
// corrupt header cannot trigger huge allocations or long loops.
import { fail } from "./fault.js";
import { Float64, MsgpackExt } from "./values.js";

const textDecoder = new TextDecoder("utf-8", { fatal: true });
const MAX_DEPTH = 512;
const SAFE = 9007199254740991;

export class Reader {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  end: number;
  /** All frames of the message: frame 0 is `buf`, the others are aux frames referenced by index. */
  frames: readonly Uint8Array[];
  depth = 0;

  constructor(frames: readonly Uint8Array[]) {
    const main = frames[0];
    if (main === undefined) fail("message has no payload frame");
    this.frames = frames;
    this.buf = plainView(main);
    this.view = new DataView(main.buffer, main.byteOffset, main.byteLength);
    this.end = main.byteLength;
  }

  /** Aux frame `index` (1-based; frame 0 is the payload) as a plain Uint8Array view, or undefined. */
  auxFrame(index: number): Uint8Array | undefined {
    const frame = index >= 1 ? this.frames[index] : undefined;
    return frame === undefined ? undefined : plainView(frame);
  }

  /** Fail unless the whole payload was consumed (msgspec rejects trailing bytes). */
  finish(): void {
    if (this.pos !== this.end) fail(`${this.end - this.pos} trailing byte(s) after the top-level value`);
  }

  need(n: number): void {
    if (this.pos + n > this.end) fail("message truncated");
  }

  peek(): number {
    if (this.pos >= this.end) fail("message truncated");
    return this.buf[this.pos]!;
  }

  /** Consume a nil if it is next. */
  nil(): boolean {
    if (this.pos < this.end && this.buf[this.pos] === 0xc0) {
      this.pos++;
      return true;
    }
    return false;
  }

  bool(): boolean {
    const b = this.peek();
    if (b === 0xc3) {
      this.pos++;
      return true;
    }
    if (b === 0xc2) {
      this.pos++;
      return false;
    }
    return fail(`expected bool, got ${typeName(b)}`);
  }

  /** An int field: msgpack int formats only (no float, no bool), returned as a safe JS number. */
  int(): number {
    const b = this.peek();
    if (b < 0x80) {
      this.pos++;
      return b;
    }
    if (b >= 0xe0) {
      this.pos++;
      return b - 256;
    }
    const v = this.intSlow(b);
    if (typeof v === "bigint") return fail(`integer ${v} is outside JavaScript's safe integer range`);
    return v;
  }

  /** An int field that may exceed 2^53 (returned as bigint then). */
  intOrBig(): number | bigint {
    const b = this.peek();
    if (b < 0x80) {
      this.pos++;
      return b;
    }
    if (b >= 0xe0) {
      this.pos++;
      return b - 256;
    }
    return this.intSlow(b);
  }

  private intSlow(b: number): number | bigint {
    const p = this.pos + 1;
    switch (b) {
      case 0xcc:
        this.need(2);
        this.pos += 2;
        return this.buf[p]!;
      case 0xcd:
        this.need(3);
        this.pos += 3;
        return this.view.getUint16(p);
      case 0xce:
        this.need(5);
        this.pos += 5;
        return this.view.getUint32(p);
      case 0xcf: {
        this.need(9);
        this.pos += 9;
        const v = this.view.getBigUint64(p);
        return v <= 9007199254740991n ? Number(v) : v;
      }
      case 0xd0:
        this.need(2);
        this.pos += 2;
        return this.view.getInt8(p);
      case 0xd1:
        this.need(3);
        this.pos += 3;
        return this.view.getInt16(p);
      case 0xd2:
        this.need(5);
        this.pos += 5;
        return this.view.getInt32(p);
      case 0xd3: {
        this.need(9);
        this.pos += 9;
        const v = this.view.getBigInt64(p);
        return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
      }
      default:
        return fail(`expected int, got ${typeName(b)}`);
    }
  }

  /** A float field: float64, float32 or any int (msgspec widens ints to float). */
  float(): number {
    const b = this.peek();
    if (b === 0xcb) {
      this.need(9);
      const v = this.view.getFloat64(this.pos + 1);
      this.pos += 9;
      return v;
    }
    if (b === 0xca) {
      this.need(5);
      const v = this.view.getFloat32(this.pos + 1);
      this.pos += 5;
      return v;
    }
    if (b < 0x80 || b >= 0xe0 || (b >= 0xcc && b <= 0xd3)) {
      const v = this.intOrBig();
      return typeof v === "bigint" ? Number(v) : v;
    }
    return fail(`expected float, got ${typeName(b)}`);
  }

  /** Length of a str at the current position (consumes the header). */
  strHeader(): number {
    const b = this.peek();
    if ((b & 0xe0) === 0xa0) {
      this.pos++;
      return b & 0x1f;
    }
    let n: number;
    if (b === 0xd9) {
      this.need(2);
      n = this.buf[this.pos + 1]!;
      this.pos += 2;
    } else if (b === 0xda) {
      this.need(3);
      n = this.view.getUint16(this.pos + 1);
      this.pos += 3;
    } else if (b === 0xdb) {
      this.need(5);
      n = this.view.getUint32(this.pos + 1);
      this.pos += 5;
    } else {
      return fail(`expected str, got ${typeName(b)}`);
    }
    return n;
  }

  str(): string {
    const n = this.strHeader();
    return this.strBody(n);
  }

  /**
   * A str expected to equal `known`: when its bytes are exactly `known`'s characters, all ASCII, returns
   * `known` itself (no new string built or hashed later); otherwise the str as str() reads it.
   */
  knownStr(known: string): string {
    const n = this.strHeader();
    const start = this.pos;
    if (n === known.length && start + n <= this.end) {
      const buf = this.buf;
      let k = 0;
      while (k < n) {
        const b = buf[start + k]!;
        if (b >= 0x80 || b !== known.charCodeAt(k)) break;
        k++;
      }
      if (k === n) {
        this.pos = start + n;
        return known;
      }
    }
    return this.strBody(n);
  }

  strBody(n: number): string {
    const start = this.pos;
    const stop = start + n;
    if (stop > this.end) fail("message truncated");
    const buf = this.buf;
    // Short ASCII strings (ids, keys, dtypes) are built directly: cheaper than a TextDecoder call.
    if (n <= 64) {
      const s = asciiString(buf, start, stop);
      if (s !== null) {
        this.pos = stop;
        return s;
      }
    }
    this.pos = stop;
    try {
      return textDecoder.decode(buf.subarray(start, stop));
    } catch {
      return fail("invalid UTF-8 in str");
    }
  }

  /** Array header: element count, checked against the bytes left. */
  array(): number {
    const b = this.peek();
    let n: number;
    if ((b & 0xf0) === 0x90) {
      this.pos++;
      return b & 0x0f;
    }
    if (b === 0xdc) {
      this.need(3);
      n = this.view.getUint16(this.pos + 1);
      this.pos += 3;
    } else if (b === 0xdd) {
      this.need(5);
      n = this.view.getUint32(this.pos + 1);
      this.pos += 5;
    } else {
      return fail(`expected array, got ${typeName(b)}`);
    }
    if (n > this.end - this.pos) fail("message truncated (array longer than the frame)");
    return n;
  }

  isArray(): boolean {
    const b = this.peek();
    return (b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd;
  }

  isStr(): boolean {
    const b = this.peek();
    return (b & 0xe0) === 0xa0 || b === 0xd9 || b === 0xda || b === 0xdb;
  }

  isInt(): boolean {
    const b = this.peek();
    return b < 0x80 || b >= 0xe0 || (b >= 0xcc && b <= 0xd3);
  }

  isMap(): boolean {
    const b = this.peek();
    return (b & 0xf0) === 0x80 || b === 0xde || b === 0xdf;
  }

  map(): number {
    const b = this.peek();
    let n: number;
    if ((b & 0xf0) === 0x80) {
      this.pos++;
      return b & 0x0f;
    }
    if (b === 0xde) {
      this.need(3);
      n = this.view.getUint16(this.pos + 1);
      this.pos += 3;
    } else if (b === 0xdf) {
      this.need(5);
      n = this.view.getUint32(this.pos + 1);
      this.pos += 5;
    } else {
      return fail(`expected map, got ${typeName(b)}`);
    }
    if (n * 2 > this.end - this.pos) fail("message truncated (map longer than the frame)");
    return n;
  }

  bin(): Uint8Array {
    const b = this.peek();
    let n: number;
    if (b === 0xc4) {
      this.need(2);
      n = this.buf[this.pos + 1]!;
      this.pos += 2;
    } else if (b === 0xc5) {
      this.need(3);
      n = this.view.getUint16(this.pos + 1);
      this.pos += 3;
    } else if (b === 0xc6) {
      this.need(5);
      n = this.view.getUint32(this.pos + 1);
      this.pos += 5;
    } else {
      return fail(`expected bin, got ${typeName(b)}`);
    }
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  isExt(): boolean {
    const b = this.peek();
    return (b >= 0xd4 && b <= 0xd8) || (b >= 0xc7 && b <= 0xc9);
  }

  ext(): MsgpackExt {
    const b = this.peek();
    let n: number;
    let hdr: number;
    switch (b) {
      case 0xd4:
        n = 1;
        hdr = 1;
        break;
      case 0xd5:
        n = 2;
        hdr = 1;
        break;
      case 0xd6:
        n = 4;
        hdr = 1;
        break;
      case 0xd7:
        n = 8;
        hdr = 1;
        break;
      case 0xd8:
        n = 16;
        hdr = 1;
        break;
      case 0xc7:
        this.need(2);
        n = this.buf[this.pos + 1]!;
        hdr = 2;
        break;
      case 0xc8:
        this.need(3);
        n = this.view.getUint16(this.pos + 1);
        hdr = 3;
        break;
      case 0xc9:
        this.need(5);
        n = this.view.getUint32(this.pos + 1);
        hdr = 5;
        break;
      default:
        return fail(`expected ext, got ${typeName(b)}`);
    }
    this.need(hdr + 1 + n);
    const type = this.view.getInt8(this.pos + hdr);
    const start = this.pos + hdr + 1;
    this.pos = start + n;
    return new MsgpackExt(type, this.buf.subarray(start, start + n));
  }

  /**
   * An opaque value (Python `Any`): ints → number (bigint outside the safe range), integral floats →
   * Float64 (so they re-encode as floats), other floats → number, str-keyed maps → plain objects,
   * other maps → Map, bin → Uint8Array, ext → MsgpackExt.
   */
  any(): unknown {
    const b = this.peek();
    if (b < 0x80) {
      this.pos++;
      return b;
    }
    if ((b & 0xe0) === 0xa0) return this.str();
    if ((b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd) return this.anyArray();
    if ((b & 0xf0) === 0x80 || b === 0xde || b === 0xdf) return this.anyMap();
    if (b >= 0xe0) {
      this.pos++;
      return b - 256;
    }
    switch (b) {
      case 0xc0:
        this.pos++;
        return null;
      case 0xc2:
        this.pos++;
        return false;
      case 0xc3:
        this.pos++;
        return true;
      case 0xca:
      case 0xcb: {
        const v = this.float();
        return Number.isInteger(v) ? new Float64(v) : v;
      }
      case 0xd9:
      case 0xda:
      case 0xdb:
        return this.str();
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return this.bin();
      default:
        if (b >= 0xcc && b <= 0xd3) return this.intOrBig();
        if (this.isExt()) return this.ext();
        return fail(`invalid msgpack byte 0x${b.toString(16)}`);
    }
  }

  /** One level deeper into a nested value (opaque containers, nested tensor lists); `leave` undoes it. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) fail(`value nested too deeply (more than ${MAX_DEPTH} levels)`);
  }

  leave(): void {
    this.depth--;
  }

  private anyArray(): unknown[] {
    const n = this.array();
    this.enter();
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = this.any();
    this.leave();
    return out;
  }

  private anyMap(): unknown {
    const n = this.map();
    this.enter();
    const start = this.pos;
    // Scan once: all keys str → plain object, otherwise a Map keeping the key values.
    const obj: Record<string, unknown> = {};
    let i = 0;
    for (; i < n; i++) {
      if (!this.isStr()) break;
      const key = this.str();
      const value = this.any();
      setOwn(obj, key, value);
    }
    if (i === n) {
      this.leave();
      return obj;
    }
    this.pos = start;
    const map = new Map<unknown, unknown>();
    for (let j = 0; j < n; j++) {
      const key = this.any();
      map.set(key instanceof Float64 ? key.value : key, this.any());
    }
    this.leave();
    return map;
  }

  /** Skip one value of any type (unknown map keys, extra trailing elements). */
  skip(): void {
    this.any();
  }
}

/**
 * The same bytes as a plain Uint8Array. Frames are often Node Buffers (zeromq.js delivers them), and every
 * `subarray` of a Buffer is a Buffer again: decoded bin, ext and tensor bytes would then be Buffers, whose
 * `slice()` aliases the frame instead of copying and whose `toString()` differs. Decoding over a plain view
 * makes the decoded value independent of the frame's class (and keeps the reader's element accesses
 * monomorphic).
 */
function plainView(frame: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(frame) === Uint8Array.prototype
    ? frame
    : new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength);
}

const fromCharCode = String.fromCharCode;

/**
 * Node's Buffer latin1 slice (it accepts any Uint8Array): one native call that builds a flat string, which for
 * ASCII bytes (checked first) is the string asciiString builds. From about 24 bytes — request ids are longer —
 * it is cheaper to build and to hash than the chunks joined below, a cons string that is flattened when first
 * hashed (/tmp micro-benchmark: 36-byte ids built and looked up in a Map, 705 → 508 ns under load; 64 bytes
 * 861 → 513 ns). Undefined outside Node: then the chunks are used for every length.
 */
const latin1Slice = (
  globalThis as {
    Buffer?: { prototype: { latin1Slice?: (this: Uint8Array, start: number, end: number) => string } };
  }
).Buffer?.prototype.latin1Slice;
const LATIN1_SLICE_FROM = 24;

/** Bytes [start, stop) as a string if they are all ASCII, else null (16/4/1-byte steps, ASCII check fused in). */
export function asciiString(buf: Uint8Array, start: number, stop: number): string | null {
  if (latin1Slice !== undefined && stop - start >= LATIN1_SLICE_FROM) {
    let any = 0;
    for (let j = start; j < stop; j++) any |= buf[j]!;
    if (any & 0x80) return null;
    return latin1Slice.call(buf, start, stop);
  }
  let out = "";
  let j = start;
  while (stop - j >= 16) {
    const a = buf[j]!;
    const b = buf[j + 1]!;
    const c = buf[j + 2]!;
    const d = buf[j + 3]!;
    const e = buf[j + 4]!;
    const f = buf[j + 5]!;
    const g = buf[j + 6]!;
    const h = buf[j + 7]!;
    const a2 = buf[j + 8]!;
    const b2 = buf[j + 9]!;
    const c2 = buf[j + 10]!;
    const d2 = buf[j + 11]!;
    const e2 = buf[j + 12]!;
    const f2 = buf[j + 13]!;
    const g2 = buf[j + 14]!;
    const h2 = buf[j + 15]!;
    if ((a | b | c | d | e | f | g | h | a2 | b2 | c2 | d2 | e2 | f2 | g2 | h2) & 0x80) return null;
    out += fromCharCode(a, b, c, d, e, f, g, h, a2, b2, c2, d2, e2, f2, g2, h2);
    j += 16;
  }
  while (stop - j >= 4) {
    const a = buf[j]!;
    const b = buf[j + 1]!;
    const c = buf[j + 2]!;
    const d = buf[j + 3]!;
    if ((a | b | c | d) & 0x80) return null;
    out += fromCharCode(a, b, c, d);
    j += 4;
  }
  while (j < stop) {
    const a = buf[j++]!;
    if (a & 0x80) return null;
    out += fromCharCode(a);
  }
  return out;
}

/** Define an own property, so a "__proto__" key cannot change the object's prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

export function typeName(b: number): string {
  if (b < 0x80 || b >= 0xe0) return "int";
  if ((b & 0xf0) === 0x80 || b === 0xde || b === 0xdf) return "map";
  if ((b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd) return "array";
  if ((b & 0xe0) === 0xa0 || b === 0xd9 || b === 0xda || b === 0xdb) return "str";
  switch (b) {
    case 0xc0:
      return "nil";
    case 0xc2:
    case 0xc3:
      return "bool";
    case 0xca:
      return "float32";
    case 0xcb:
      return "float64";
    case 0xc4:
    case 0xc5:
    case 0xc6:
      return "bin";
    case 0xc1:
      return "invalid byte 0xc1";
    default:
      if (b >= 0xcc && b <= 0xd3) return "int";
      return "ext";
  }
}

export { SAFE as MAX_SAFE };
