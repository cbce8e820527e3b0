// Generic msgpack skipping for routing-level reads: walks values by their headers without decoding them.
// Iterative (a counter of values still to skip, no recursion: nesting depth costs nothing) and
// allocation-free. Reads bytes one at a time, so it works on any view (Node Buffer, unaligned subarray).

/** `buf[pos..pos+2)` as a big-endian u16 (caller checked the bounds). */
function u16(buf: Uint8Array, pos: number): number {
  return (buf[pos]! << 8) | buf[pos + 1]!;
}

/** `buf[pos..pos+4)` as a big-endian u32 (caller checked the bounds). */
export function u32(buf: Uint8Array, pos: number): number {
  return buf[pos]! * 0x1000000 + ((buf[pos + 1]! << 16) | (buf[pos + 2]! << 8) | buf[pos + 3]!);
}

/** Byte size of the fixed-size formats (no length field), 0 for the others. Indexed by `b - 0xc0`. */
const FIXED = new Uint8Array(0x20);
// biome-ignore format: one row per format family
for (const [b, size] of [
  // nil, false, true; float32, float64
  [0xc0, 1], [0xc2, 1], [0xc3, 1], [0xca, 5], [0xcb, 9],
  // uint 8/16/32/64, int 8/16/32/64
  [0xcc, 2], [0xcd, 3], [0xce, 5], [0xcf, 9], [0xd0, 2], [0xd1, 3], [0xd2, 5], [0xd3, 9],
  // fixext 1/2/4/8/16 (header, type, data)
  [0xd4, 3], [0xd5, 4], [0xd6, 6], [0xd7, 10], [0xd8, 18],
] as const) {
  FIXED[b - 0xc0] = size;
}

/**
 * The position after `count` complete msgpack values that start at `pos`, or -1 when the bytes up to `end`
 * are not that many well-formed values (truncated, the never-used byte 0xc1, a declared length that runs
 * past `end`). Only the structure is checked: strings are not validated as UTF-8, nor ext payloads.
 */
export function skipValues(buf: Uint8Array, pos: number, end: number, count = 1): number {
  let pending = count;
  while (pending > 0) {
    if (pos >= end) return -1;
    const b = buf[pos]!;
    pending--;
    if (b < 0x80 || b >= 0xe0 || b === 0xc0) {
      pos += 1; // fixint, nil: most skipped values of an output
      continue;
    }
    if (b < 0x90) {
      pending += (b & 0x0f) * 2; // fixmap
      pos += 1;
    } else if (b < 0xa0) {
      pending += b & 0x0f; // fixarray
      pos += 1;
    } else if (b < 0xc0) {
      pos += 1 + (b & 0x1f); // fixstr
    } else {
      const fixed = FIXED[b - 0xc0]!;
      if (fixed !== 0) {
        pos += fixed;
      } else {
        switch (b) {
          case 0xc4: // bin8
          case 0xd9: // str8
            if (pos + 2 > end) return -1;
            pos += 2 + buf[pos + 1]!;
            break;
          case 0xc5: // bin16
          case 0xda: // str16
            if (pos + 3 > end) return -1;
            pos += 3 + u16(buf, pos + 1);
            break;
          case 0xc6: // bin32
          case 0xdb: // str32
            if (pos + 5 > end) return -1;
            pos += 5 + u32(buf, pos + 1);
            break;
          case 0xc7: // ext8: length, type, data
            if (pos + 2 > end) return -1;
            pos += 3 + buf[pos + 1]!;
            break;
          case 0xc8: // ext16
            if (pos + 3 > end) return -1;
            pos += 4 + u16(buf, pos + 1);
            break;
          case 0xc9: // ext32
            if (pos + 5 > end) return -1;
            pos += 6 + u32(buf, pos + 1);
            break;
          case 0xdc: // array16
            if (pos + 3 > end) return -1;
            pending += u16(buf, pos + 1);
            pos += 3;
            break;
          case 0xdd: // array32
            if (pos + 5 > end) return -1;
            pending += u32(buf, pos + 1);
            pos += 5;
            break;
          case 0xde: // map16
            if (pos + 3 > end) return -1;
            pending += u16(buf, pos + 1) * 2;
            pos += 3;
            break;
          case 0xdf: // map32
            if (pos + 5 > end) return -1;
            pending += u32(buf, pos + 1) * 2;
            pos += 5;
            break;
          default:
            return -1; // 0xc1: never used by msgpack
        }
      }
    }
    // Every value still to skip takes at least one byte: a corrupt count fails here, not after a long loop.
    if (pos > end || pending > end - pos) return -1;
  }
  return pos;
}
