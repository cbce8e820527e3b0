import { type EngineIndexRange, UnexpectedEngineIdentityError } from "@vllm-engine-core/errors";
import { engineIndexFromIdentity } from "@vllm-engine-core/protocol";

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

/** The 2-byte routing identity rule (vLLM's EngineCoreProc: `index.to_bytes(2, "little")`). */
const IDENTITY_RULE = "a 2-byte little-endian engine index (vLLM's EngineCoreProc routing identity)";

/** "engine index 0 (engineCount 1)", "engine indices 2…5 (engineStartIndex 2, engineCount 4)". */
export function describeRange({ start, count }: EngineIndexRange): string {
  const indices = count === 1 ? `engine index ${start}` : `engine indices ${start}…${start + count - 1}`;
  return start === 0
    ? `${indices} (engineCount ${count})`
    : `${indices} (engineStartIndex ${start}, engineCount ${count})`;
}

/** The engine index of a 2-byte identity inside `range`, or undefined. */
export function indexInRange(identity: Uint8Array, range: EngineIndexRange): number | undefined {
  if (identity.length !== 2) return undefined;
  const index = engineIndexFromIdentity(identity);
  return index >= range.start && index < range.start + range.count ? index : undefined;
}

/**
 * The error for a peer whose identity is none of `range`'s engines — checked before anything is sent to it,
 * like vLLM's `wait_for_engine_startup` (`vllm/v1/engine/utils.py`), which looks the identity up among the
 * engines it launched before it sends INIT.
 */
export function unexpectedIdentity(
  identity: Uint8Array,
  address: string,
  range: EngineIndexRange,
): UnexpectedEngineIdentityError {
  const hex = identityHex(identity);
  if (identity.length !== 2) {
    return new UnexpectedEngineIdentityError({ identityHex: hex, address, expected: IDENTITY_RULE });
  }
  return new UnexpectedEngineIdentityError({
    identityHex: hex,
    engineIndex: engineIndexFromIdentity(identity),
    address,
    expected: describeRange(range),
    expectedRange: { ...range },
  });
}
