import type { EngineCoreOutput } from "@vllm-engine-core/client";
import { FinishReason } from "@vllm-engine-core/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkStopStrings,
  codePointLength,
  codePointsBack,
  InvalidTextOptionsError,
  type TextDelta,
  TextOutputProcessor,
  type TextSamplingParams,
} from "../src/index.js";
import { bytewiseIds, qwen3, wellFormed } from "./helpers.js";

const tok = qwen3();

function feed(ids: number[][], params: TextSamplingParams, prompt: number[] = []): TextDelta[] {
  const p = new TextOutputProcessor(tok, { requestId: "s", promptTokenIds: prompt, samplingParams: params });
  const out: TextDelta[] = [];
  ids.forEach((chunk, i) => {
    const last = i === ids.length - 1;
    const d = p.process({
      requestId: "s",
      newTokenIds: chunk,
      finishReason: last ? FinishReason.LENGTH : null,
      stopReason: null,
    } as EngineCoreOutput);
    if (d !== null) out.push(d);
  });
  return out;
}

const one = (ids: number[]) => ids.map((id) => [id]);
const textOf = (deltas: TextDelta[]) => deltas.map((d) => d.text).join("");

describe("check_stop_strings (vllm/v1/engine/detokenizer.py), the cases of vLLM's test_check_stop_strings.py", () => {
  it("the stop string that completes earliest wins, whatever the list order", () => {
    for (const stop of [
      ["a", "is"],
      ["is", "a"],
    ]) {
      expect(checkStopStrings(" The user is a", 5, stop, false)).toEqual({ stop: "is", truncateTo: 10 });
      expect(checkStopStrings(" The user is a", 5, stop, true)).toEqual({ stop: "is", truncateTo: 12 });
    }
    expect(checkStopStrings("abc", 3, ["abc", "b"], false)).toEqual({ stop: "b", truncateTo: 1 });
  });
  it("ties are broken by list order", () => {
    expect(checkStopStrings("ab", 2, ["ab", "b"], false)).toEqual({ stop: "ab", truncateTo: 0 });
    expect(checkStopStrings("ab", 2, ["b", "ab"], false)).toEqual({ stop: "b", truncateTo: 1 });
  });
  it("a single stop; no truncation when it ends the text and is included", () => {
    expect(checkStopStrings("hello world.", 1, ["."], false)).toEqual({ stop: ".", truncateTo: 11 });
    expect(checkStopStrings("hello world.", 1, ["."], true)).toEqual({ stop: ".", truncateTo: -1 });
  });
  it("no match, no new text, no stop strings", () => {
    expect(checkStopStrings("hello", 5, ["zzz"], false)).toBeNull();
    expect(checkStopStrings("hello", 0, ["h"], false)).toBeNull();
    expect(checkStopStrings("hello", 5, [], false)).toBeNull();
  });
  it("only searches the new text plus len(stop) - 1 characters before it", () => {
    expect(checkStopStrings("STOP and more", 4, ["STOP"], false)).toBeNull();
    expect(checkStopStrings("xxSTOP", 1, ["STOP"], false)).toEqual({ stop: "STOP", truncateTo: 2 });
    expect(checkStopStrings("xxSTOPy", 1, ["STOP"], false)).toBeNull();
  });
  it("counts code points where Python does (emoji are two UTF-16 units)", () => {
    expect(codePointLength("a😀b")).toBe(3);
    expect("a😀b".slice(0, codePointsBack("a😀b", 2))).toBe("a");
    expect(codePointsBack("ab", 5)).toBe(0);
  });
});

describe("stop strings in the detokenizer", () => {
  it("finishes with STOP and the string, cut before it, and holds back what could start it", async () => {
    const ids = await tok.encode("Hello world, this is a STOP test and more", { addSpecialTokens: false });
    const deltas = feed(one(ids), { stop: ["STOP"] });
    const last = deltas.at(-1)!;
    expect(last.finished).toBe(true);
    expect(last.finishReason).toBe(FinishReason.STOP);
    expect(last.stopReason).toBe("STOP");
    expect(last.abortEngine).toBe(true);
    expect(textOf(deltas)).toBe("Hello world, this is a ");
    // The request ends at the token that completes "STOP": later outputs are ignored.
    expect(deltas.length).toBeLessThan(ids.length);
    // Streaming never showed any part of the stop string.
    for (const d of deltas) expect(d.text).not.toMatch(/S/);
  });

  it("streams all but the last len(stop) - 1 characters until the request ends", () => {
    const deltas = feed(one(bytewiseIds(tok, "xSTOyz")), { stop: ["STOP"] });
    expect(deltas.map((d) => d.text)).toEqual(["", "", "", "x", "S", "TOyz"]);
  });

  it("keeps the stop string with include_stop_str_in_output, and streams without holding back", async () => {
    const ids = await tok.encode("one two STOP three", { addSpecialTokens: false });
    const deltas = feed(one(ids), { stop: ["STOP"], includeStopStrInOutput: true });
    expect(textOf(deltas)).toBe("one two STOP");
    expect(deltas[0]!.text).toBe("one");
  });

  it("truncates text after the stop string inside one multi-token output", async () => {
    const ids = await tok.encode("alpha beta gamma delta", { addSpecialTokens: false });
    expect(textOf(feed([ids], { stop: [" gamma"] }))).toBe("alpha beta");
    expect(textOf(feed([ids], { stop: [" gamma"], includeStopStrInOutput: true }))).toBe("alpha beta gamma");
    const d = feed([ids], { stop: ["delta", "beta"] }).at(-1)!;
    expect(d.stopReason).toBe("beta");
  });

  it("matches a stop string made of characters split across byte tokens", () => {
    const ids = bytewiseIds(tok, "前面世界后面");
    const deltas = feed(one(ids), { stop: ["世界"] });
    expect(textOf(deltas)).toBe("前面");
    expect(deltas.at(-1)!.stopReason).toBe("世界");
  });

  it("holds back code points, never half an emoji", () => {
    const ids = bytewiseIds(tok, "a😀😀b😀c");
    const deltas = feed(one(ids), { stop: ["😀c!", "zz"] });
    for (const d of deltas) expect(wellFormed(d.text)).toBe(true);
    expect(textOf(deltas)).toBe("a😀😀b😀c");
    expect(deltas.at(-1)!.finishReason).toBe(FinishReason.LENGTH);
  });

  it("ignores stop strings within the first min_tokens tokens", async () => {
    const ids = await tok.encode("a STOP b STOP c", { addSpecialTokens: false });
    const firstStop = ids.findIndex((_, i) => tok.decode(ids.slice(0, i + 1)).endsWith("STOP"));
    expect(textOf(feed(one(ids), { stop: ["STOP"] }))).toBe("a ");
    expect(textOf(feed(one(ids), { stop: ["STOP"], minTokens: firstStop + 1 }))).toBe("a STOP b ");
    // Also when the tokens arrive in one output.
    expect(textOf(feed([ids], { stop: ["STOP"], minTokens: firstStop + 1 }))).toBe("a STOP b ");
  });

  it("rejects a stop list that is not strings", () => {
    expect(() => feed([[1]], { stop: [1 as unknown as string] })).toThrow(InvalidTextOptionsError);
  });

  it("any split of the tokens into outputs gives the text and stop of one token at a time (property)", async () => {
    const words = ["the", " cat", " sat", " on", " mat", ".", " 世界", " 😀", "\n", " STOP", " end"];
    const stopStrings = fc.array(
      fc.constantFrom("cat", "at", "t s", " on", "mat.", "世", "😀\n", "STOP", "\n e", "zz"),
      { maxLength: 3 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 20 }),
        stopStrings,
        fc.boolean(),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
        async (text, stop, include, minTokens, sizes) => {
          const ids = await tok.encode(text.join(""), { addSpecialTokens: false });
          const params = { stop, includeStopStrInOutput: include, minTokens };
          const single = feed(one(ids), params);
          const chunks: number[][] = [];
          for (let at = 0, k = 0; at < ids.length; k++) {
            const n = sizes[k % sizes.length]!;
            chunks.push(ids.slice(at, at + n));
            at += n;
          }
          const multi = feed(chunks, params);
          if (minTokens === 0) {
            // Independent oracle: the stop string whose first occurrence ends earliest in the full text.
            const full = tok.decode(ids, { skipSpecialTokens: true });
            let best: { stop: string; index: number; end: number } | undefined;
            for (const s of stop) {
              const index = full.indexOf(s);
              if (index !== -1 && (best === undefined || index + s.length < best.end)) {
                best = { stop: s, index, end: index + s.length };
              }
            }
            const expected = best === undefined ? full : full.slice(0, include ? best.end : best.index);
            expect(textOf(single)).toBe(expected);
            expect(single.at(-1)!.stopReason).toBe(best?.stop ?? null);
          }
          expect(textOf(multi)).toBe(textOf(single));
          expect(multi.at(-1)!.stopReason).toBe(single.at(-1)!.stopReason);
          expect(multi.at(-1)!.finishReason).toBe(single.at(-1)!.finishReason);
        },
      ),
      { numRuns: 300 },
    );
  });
});
