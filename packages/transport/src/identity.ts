/** Lower-case hex of an identity, for messages and map keys. */
export function identityHex(identity: Uint8Array): string {
  return Buffer.from(identity.buffer, identity.byteOffset, identity.byteLength).toString("hex");
}

/** Byte-wise order (vLLM/Rust engine order): 00 00 < 01 00 < … < ff 00 < 00 01. */
export function compareIdentity(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(
    Buffer.from(a.buffer, a.byteOffset, a.byteLength),
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

export function describeIndices(indices: Iterable<number>): string {
  const list = [...indices].sort((a, b) => a - b);
  return list.length === 1 ? `engine ${list[0]}` : `engines ${list.join(", ")}`;
}
