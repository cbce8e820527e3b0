// mergeChoices on scripted text streams: deltas in arrival order, one read outstanding per choice, and
// every other choice ended (aborted on the engine) when one fails or the reader leaves.
import type { TextDelta, TextStream } from "@vllm-engine-core/text";
import { describe, expect, it } from "vitest";
import { type Choice, mergeChoices } from "../src/fan-out.js";

/** A stream whose reads the test resolves one by one. */
class ScriptedStream {
  readonly reads: { resolve(r: IteratorResult<TextDelta>): void; reject(e: unknown): void }[] = [];
  returned = 0;
  next(): Promise<IteratorResult<TextDelta>> {
    return new Promise((resolve, reject) => this.reads.push({ resolve, reject }));
  }
  async return(): Promise<IteratorResult<TextDelta>> {
    this.returned++;
    return { value: undefined, done: true };
  }
  give(text: string): void {
    this.reads.shift()!.resolve({ value: { text } as TextDelta, done: false });
  }
}

function choicesOf(streams: ScriptedStream[]): Choice[] {
  return streams.map((s, index) => ({
    index,
    promptIndex: 0,
    requestId: `${index}_r`,
    stream: s as unknown as TextStream,
  }));
}

/** Lets pending promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("mergeChoices", () => {
  it("yields in arrival order and reads a choice again only when asked for the next delta", async () => {
    const streams = [new ScriptedStream(), new ScriptedStream()];
    const merged = mergeChoices(choicesOf(streams));
    const first = merged.next();
    await settle();
    expect(streams.map((s) => s.reads.length)).toEqual([1, 1]);
    streams[1]!.give("b1");
    expect((await first).value).toMatchObject({ choice: { index: 1 }, delta: { text: "b1" } });
    // Not read again yet: the consumer has not asked.
    expect(streams[1]!.reads.length).toBe(0);
    const second = merged.next();
    await settle();
    expect(streams[1]!.reads.length).toBe(1);
    streams[0]!.give("a1");
    expect((await second).value).toMatchObject({ choice: { index: 0 }, delta: { text: "a1" } });
    for (const s of streams) s.reads.shift()?.resolve({ value: undefined, done: true });
    const third = merged.next();
    await settle();
    streams[0]!.reads.shift()?.resolve({ value: undefined, done: true });
    expect((await third).done).toBe(true);
  });

  it("one choice failing ends every other choice and throws its error", async () => {
    const streams = [new ScriptedStream(), new ScriptedStream(), new ScriptedStream()];
    const merged = mergeChoices(choicesOf(streams));
    const pending = merged.next();
    await settle();
    streams[2]!.reads.shift()!.reject(new Error("engine dead"));
    await expect(pending).rejects.toThrow("engine dead");
    expect(streams.map((s) => s.returned > 0)).toEqual([true, true, true]);
  });

  it("a reader that leaves ends every choice, the one just yielded included", async () => {
    const streams = [new ScriptedStream(), new ScriptedStream()];
    const merged = mergeChoices(choicesOf(streams));
    const pending = merged.next();
    await settle();
    streams[0]!.give("a1");
    await pending;
    await merged.return?.();
    expect(streams.map((s) => s.returned > 0)).toEqual([true, true]);
  });
});
