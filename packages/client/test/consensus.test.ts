import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { sameValue } from "../src/consensus.js";

describe("sameValue (utility consensus)", () => {
  it("treats equal containers as equal, empty ones included", () => {
    expect(sameValue([], [])).toBe(true);
    expect(sameValue({}, {})).toBe(true);
    expect(sameValue([[]], [[]])).toBe(true);
    expect(sameValue({ a: [1, { b: "x" }] }, { a: [1, { b: "x" }] })).toBe(true);
    expect(sameValue(new Map([[1, "a"]]), new Map([[1, "a"]]))).toBe(true);
    expect(sameValue(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
  });

  it("never equates null with 0, false or an empty container", () => {
    expect(sameValue([], null)).toBe(false);
    expect(sameValue(null, [])).toBe(false);
    expect(sameValue(0, null)).toBe(false);
    expect(sameValue([0], [null])).toBe(false);
    expect(sameValue(false, null)).toBe(false);
    expect(sameValue(false, 0)).toBe(false);
    expect(sameValue({}, [])).toBe(false);
  });

  it("compares numbers numerically across int, float and bigint", () => {
    expect(sameValue(1, new Float64(1))).toBe(true);
    expect(sameValue(2n ** 60n, 2n ** 60n)).toBe(true);
    expect(sameValue(5n, 5)).toBe(true);
    expect(sameValue(1, 2)).toBe(false);
    expect(sameValue(new Float64(1.5), 1.5)).toBe(true);
  });

  it("distinguishes different shapes and contents", () => {
    expect(sameValue([1, 2], [2, 1])).toBe(false);
    expect(sameValue({ a: 1 }, { b: 1 })).toBe(false);
    expect(sameValue({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameValue(new MsgpackExt(3, Uint8Array.of(1)), new MsgpackExt(3, Uint8Array.of(1)))).toBe(true);
    expect(sameValue(new MsgpackExt(3, Uint8Array.of(1)), new MsgpackExt(3, Uint8Array.of(2)))).toBe(false);
  });
});
