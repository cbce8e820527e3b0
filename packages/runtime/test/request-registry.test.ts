// The runtime's per-connection request registry: lookups by id and by the id's UTF-8 bytes in a frame
// (what output routing uses), including ids whose hashes collide and bytes at unaligned Buffer offsets.
import { requestIdHash } from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { RequestRegistry } from "../src/runtime-thread/request-registry.js";

/** Two distinct ids with the same requestIdHash (found by search: 30-bit hashes collide within ~10^5 ids). */
function collidingIds(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `req-${i}`;
    const hash = requestIdHash(Buffer.from(id));
    const other = seen.get(hash);
    if (other !== undefined) return [other, id];
    seen.set(hash, id);
  }
}

/** `id`'s bytes inside a larger Buffer at an odd offset, as a frame holds them. */
function inFrame(id: string, offset = 3): { buf: Buffer; start: number; end: number; hash: number } {
  const bytes = Buffer.from(id);
  const backing = Buffer.alloc(offset + bytes.length + 5, 0x61);
  bytes.copy(backing, offset);
  const buf = backing.subarray(1); // a view, as zeromq.js hands out
  const start = offset - 1;
  const end = start + bytes.length;
  return { buf, start, end, hash: requestIdHash(buf, start, end) };
}

describe("RequestRegistry", () => {
  it("finds a request by id and by its bytes in a frame (ASCII, non-ASCII, long, empty)", () => {
    const registry = new RequestRegistry<number>();
    const ids = ["a", "ünïcödé-🚀", "x".repeat(300), "", "chatcmpl-1234567890abcdef"];
    for (const [i, id] of ids.entries()) registry.set(id, i);
    expect(registry.size).toBe(ids.length);
    ids.forEach((id, i) => {
      expect(registry.get(id)).toBe(i);
      const { buf, start, end, hash } = inFrame(id);
      expect(registry.getByKey(buf, start, end, hash)).toBe(i);
    });
    const missing = inFrame("b");
    expect(registry.getByKey(missing.buf, missing.start, missing.end, missing.hash)).toBeUndefined();
    // A prefix of a live id is another id.
    const prefix = inFrame("x".repeat(299));
    expect(registry.getByKey(prefix.buf, prefix.start, prefix.end, prefix.hash)).toBeUndefined();
  });

  it("tells colliding ids apart, and deletes either one without losing the other", () => {
    const [first, second] = collidingIds();
    expect(requestIdHash(Buffer.from(first))).toBe(requestIdHash(Buffer.from(second)));
    for (const deleteFirst of [true, false]) {
      const registry = new RequestRegistry<string>();
      registry.set(first, "first");
      registry.set(second, "second");
      const a = inFrame(first);
      const b = inFrame(second);
      expect(registry.getByKey(a.buf, a.start, a.end, a.hash)).toBe("first");
      expect(registry.getByKey(b.buf, b.start, b.end, b.hash)).toBe("second");
      expect(registry.delete(deleteFirst ? first : second)).toBe(true);
      expect(registry.getByKey(a.buf, a.start, a.end, a.hash)).toBe(deleteFirst ? undefined : "first");
      expect(registry.getByKey(b.buf, b.start, b.end, b.hash)).toBe(deleteFirst ? "second" : undefined);
      expect(registry.delete(deleteFirst ? second : first)).toBe(true);
      expect(registry.getByKey(a.buf, a.start, a.end, a.hash)).toBeUndefined();
      expect(registry.getByKey(b.buf, b.start, b.end, b.hash)).toBeUndefined();
      expect(registry.size).toBe(0);
    }
  });

  it("deletes while iterating, re-adds a deleted id, and clears both indexes", () => {
    const registry = new RequestRegistry<number>();
    for (let i = 0; i < 10; i++) registry.set(`r${i}`, i);
    const seen: string[] = [];
    for (const [id, value] of registry) {
      seen.push(id);
      if (value % 2 === 0) registry.delete(id);
    }
    expect(seen).toHaveLength(10);
    expect([...registry].map(([id]) => id)).toEqual(["r1", "r3", "r5", "r7", "r9"]);
    expect(registry.delete("r0")).toBe(false);
    registry.set("r0", 100);
    const r0 = inFrame("r0");
    expect(registry.getByKey(r0.buf, r0.start, r0.end, r0.hash)).toBe(100);
    registry.clear();
    expect(registry.size).toBe(0);
    expect(registry.has("r1")).toBe(false);
    expect(registry.getByKey(r0.buf, r0.start, r0.end, r0.hash)).toBeUndefined();
  });
});
