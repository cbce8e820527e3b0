// The hash a request id is indexed by where output messages are routed without building id strings
// (readOutputRoute computes it over the id's UTF-8 bytes as it reads them; a registry hashes the same bytes
// when the request is added). FNV-1a, 32-bit, masked to 30 bits so that it is a small integer on every V8
// build (a Map with small-integer keys hashes them for free).
export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** The routing hash of the UTF-8 bytes `buf[start, end)` of a request id. */
export function requestIdHash(buf: Uint8Array, start = 0, end = buf.length): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, FNV_PRIME);
  return h & 0x3fffffff;
}
