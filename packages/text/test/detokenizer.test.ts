import type { EngineCoreOutput } from "@vllm-engine-core/client";
import { FinishReason } from "@vllm-engine-core/client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  REPLACEMENT_CHARACTER,
  type TextDelta,
  TextOutputProcessor,
  type TextSamplingParams,
  type Tokenizer,
  withoutBrokenEnd,
} from "../src/index.js";
import { byteTokenIds, bytewiseIds, qwen3, wellFormed } from "./helpers.js";

function output(
  ids: number[],
  finishReason: FinishReason | null = null,
  stopReason: number | string | null = null,
) {
  return { requestId: "r", newTokenIds: ids, finishReason, stopReason } as EngineCoreOutput;
}

/** Feeds `chunks` as engine outputs (the last one finishes with `finish`) and collects the deltas. */
function run(
  tok: Tokenizer,
  chunks: number[][],
  options: {
    prompt?: number[];
    params?: TextSamplingParams;
    finish?: FinishReason;
    stopReason?: number | null;
  } = {},
): { deltas: TextDelta[]; text: string; last: TextDelta } {
  const processor = new TextOutputProcessor(tok, {
    requestId: "r",
    promptTokenIds: options.prompt ?? [],
    samplingParams: options.params ?? {},
  });
  const deltas: TextDelta[] = [];
  chunks.forEach((ids, i) => {
    const final = i === chunks.length - 1;
    const delta = processor.process(
      output(
        ids,
        final ? (options.finish ?? FinishReason.LENGTH) : null,
        final ? (options.stopReason ?? null) : null,
      ),
    );
    if (delta !== null) deltas.push(delta);
  });
  return { deltas, text: deltas.map((d) => d.text).join(""), last: deltas[deltas.length - 1]! };
}

/** Random split of `ids` into engine outputs of 1 to 4 tokens. */
function chunked(ids: number[], sizes: number[]): number[][] {
  const chunks: number[][] = [];
  let at = 0;
  let k = 0;
  while (at < ids.length) {
    const n = sizes.length === 0 ? 1 : sizes[k++ % sizes.length]!;
    chunks.push(ids.slice(at, at + n));
    at += n;
  }
  return chunks.length > 0 ? chunks : [[]];
}

const tok = qwen3();
const bytes = byteTokenIds(tok);
/** Ids as a model emits them: ordinary tokens, single-byte tokens (also stray continuation bytes), added tokens. */
const anyId = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 151_642 }) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => bytes[b]!) },
  { weight: 1, arbitrary: fc.integer({ min: 151_643, max: 151_668 }) },
);
/** Valid text spelled so that multi-byte characters are split across tokens (CJK, emoji, accents). */
const textPiece = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.constantFrom("你好世界", "😀👍🏽", "👨‍👩‍👧", "é", "日本語", "🇯🇵", "a b", "\n"),
);
const sizes = fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 5 });

describe("incremental detokenization (vLLM FastIncrementalDetokenizer)", () => {
  it("concatenated deltas equal a full decode of the same ids without its broken end, for random ids split at random (property)", () => {
    fc.assert(
      fc.property(fc.array(anyId, { maxLength: 60 }), sizes, fc.boolean(), (ids, s, skip) => {
        const { text, last } = run(tok, chunked(ids, s), { params: { skipSpecialTokens: skip }, prompt: [] });
        expect(last.finished).toBe(true);
        expect(text).toBe(withoutBrokenEnd(tok.decode(ids, { skipSpecialTokens: skip })));
      }),
      { numRuns: 500 },
    );
  });

  it("never emits U+FFFD or a broken character mid-stream when the ids spell valid text (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(textPiece, fc.boolean()), { maxLength: 12 }),
        sizes,
        async (pieces, s) => {
          const ids: number[] = [];
          for (const [piece, bytewise] of pieces) {
            ids.push(
              ...(bytewise ? bytewiseIds(tok, piece) : await tok.encode(piece, { addSpecialTokens: false })),
            );
          }
          const expected = tok.decode(ids);
          fc.pre(!expected.includes(REPLACEMENT_CHARACTER));
          const { deltas, text } = run(tok, chunked(ids, s));
          expect(text).toBe(expected);
          for (const d of deltas) {
            expect(d.text.includes(REPLACEMENT_CHARACTER)).toBe(false);
            expect(wellFormed(d.text)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the ByteLevel fast path and the generic DecodeStream window emit the same chunks, with any prompt (property)", () => {
    fc.assert(
      fc.property(
        fc.array(anyId, { maxLength: 12 }),
        fc.array(anyId, { maxLength: 40 }),
        fc.boolean(),
        (prompt, ids, skip) => {
          const fast = tok.createDecodeStream(prompt, { skipSpecialTokens: skip });
          const generic = tok.createDecodeStream(prompt, { skipSpecialTokens: skip, generic: true });
          for (const id of ids) expect(fast.step(id)).toBe(generic.step(id));
          expect(fast.flush()).toBe(generic.flush());
        },
      ),
      { numRuns: 500 },
    );
  });

  it("holds an unfinished character back until the token that completes it, then emits it whole", () => {
    // 你 = E4 BD A0, 😀 = F0 9F 98 80, each byte its own token.
    const ids = bytewiseIds(tok, "a你😀b");
    const { deltas } = run(
      tok,
      ids.map((id) => [id]),
    );
    expect(deltas.map((d) => d.text)).toEqual(["a", "", "", "你", "", "", "", "😀", "b"]);
  });

  it("lets a prompt that ends inside a character be completed by the first generated tokens", () => {
    const [e4, bd, a0] = bytewiseIds(tok, "你");
    const prompt = [...bytewiseIds(tok, "say "), e4!, bd!];
    const { deltas, text } = run(tok, [[a0!], [bytes[0x21]!]], { prompt });
    expect(deltas.map((d) => d.text)).toEqual(["你", "!"]);
    expect(text).toBe("你!");
  });

  it("primes the decode stream with the prompt's last tokens (no prompt text in the output)", async () => {
    const prompt = await tok.encode("The capital of France is");
    const generated = await tok.encode(" Paris, of course.");
    const { text } = run(tok, [generated.slice(0, 2), generated.slice(2)], { prompt });
    expect(text).toBe(" Paris, of course.");
  });

  it("drops an unfinished trailing character when the request ends, as vLLM does (no U+FFFD)", () => {
    const [e4, bd] = bytewiseIds(tok, "你");
    const { deltas } = run(tok, [[bytes[0x61]!], [e4!], [bd!]]);
    expect(deltas.map((d) => d.text)).toEqual(["a", "", ""]);
    expect(tok.decode([bytes[0x61]!, e4!, bd!])).toBe(`a${REPLACEMENT_CHARACTER}`);
  });

  // The UTF-8 edges with Qwen3's own multi-byte tokens (README, "UTF-8 edges"). vLLM's outputs quoted here
  // are those of its FastIncrementalDetokenizer (tokenizers 0.23.2 `DecodeStream`, prefilled with the
  // prompt) on the same tokenizer.json and ids.
  // "café ☕" = ca | fé | " \xe2\x98" (25125: a space and two of ☕'s three bytes) | "\x95" (243);
  // " 🤖" = " \xf0\x9f" (11162) | "\xa4" (97) | "\x96" (244); "🧑‍💻" = 🧑 | "\xe2\x80" (378) | ...
  const CAFE = [924, 58858];
  const SPACE_AND_TWO_BYTES_OF_COFFEE = 25125;
  const LAST_BYTE_OF_COFFEE = 243;
  const SPACE_AND_TWO_BYTES_OF_ROBOT = 11162;
  const THIRD_BYTE_OF_ROBOT = 97;
  const LAST_BYTE_OF_ROBOT = 244;
  const TECHNOLOGIST = 148738;
  const TWO_BYTES_OF_ZWJ = 378;

  it("a stream ending mid-character: the broken bytes are dropped (vLLM too), whole characters held with them are kept (vLLM drops them)", async () => {
    expect(tok.decode([SPACE_AND_TWO_BYTES_OF_COFFEE])).toBe(` ${REPLACEMENT_CHARACTER}`);
    // vLLM: "ca", "fé", then nothing: "café".
    const cafe = run(tok, [[CAFE[0]!], [CAFE[1]!], [SPACE_AND_TWO_BYTES_OF_COFFEE]]);
    expect(cafe.deltas.map((d) => d.text)).toEqual(["ca", "fé", " "]);
    expect(cafe.last.finished).toBe(true);
    // vLLM: nothing at all.
    expect(run(tok, [[SPACE_AND_TWO_BYTES_OF_ROBOT, THIRD_BYTE_OF_ROBOT]]).text).toBe(" ");
    // vLLM: "🧑" — the same.
    expect(run(tok, [[TECHNOLOGIST], [TWO_BYTES_OF_ZWJ]]).text).toBe("🧑");
    // With a stop string to hold text back, and the held text ending mid-character.
    const held = run(tok, [[...CAFE, SPACE_AND_TWO_BYTES_OF_COFFEE]], { params: { stop: ["xyz"] } });
    expect(held.text).toBe("café ");
    for (const d of [...cafe.deltas, ...held.deltas]) expect(d.text).not.toContain(REPLACEMENT_CHARACTER);
  });

  it("a prompt ending mid-character: the token that completes it emits that character alone (vLLM repeats the whole prompt)", async () => {
    const ok = await tok.encode(" ok", { addSpecialTokens: false });
    // vLLM's first chunk: "café ☕" (the whole prompt text and the completed character), then " ok".
    const coffee = run(tok, [[LAST_BYTE_OF_COFFEE], ok], {
      prompt: [...CAFE, SPACE_AND_TWO_BYTES_OF_COFFEE],
    });
    expect(coffee.deltas.map((d) => d.text)).toEqual(["☕", " ok"]);
    // vLLM's first chunk: "Hello 🤖".
    const hello = await tok.encode("Hello", { addSpecialTokens: false });
    const robot = run(tok, [[LAST_BYTE_OF_ROBOT, ...ok]], {
      prompt: [...hello, SPACE_AND_TWO_BYTES_OF_ROBOT, THIRD_BYTE_OF_ROBOT],
    });
    expect(robot.text).toBe("🤖 ok");
    // The prompt's unfinished character never completed: nothing of the prompt is emitted.
    expect(run(tok, [[]], { prompt: [...CAFE, SPACE_AND_TWO_BYTES_OF_COFFEE] }).text).toBe("");
    // The generic DecodeStream window (any tokenizer) agrees with the ByteLevel fast path on both edges.
    for (const [prompt, ids] of [
      [
        [...CAFE, SPACE_AND_TWO_BYTES_OF_COFFEE],
        [LAST_BYTE_OF_COFFEE, ...ok],
      ],
      [[], [...CAFE, SPACE_AND_TWO_BYTES_OF_COFFEE]],
    ] as const) {
      const fast = tok.createDecodeStream(prompt, { skipSpecialTokens: true });
      const generic = tok.createDecodeStream(prompt, { skipSpecialTokens: true, generic: true });
      const both = [fast, generic].map((s) => [...ids.map((id) => s.step(id)), s.flush()].join(""));
      expect(both[0]).toBe(both[1]);
    }
  });

  it("skip_special_tokens drops special tokens, keeps non-special added ones", async () => {
    const ids = await tok.encode("<|im_start|>hi<tool_call>x<|im_end|>", { addSpecialTokens: false });
    expect(run(tok, [ids]).text).toBe("hi<tool_call>x");
    expect(run(tok, [ids], { params: { skipSpecialTokens: false } }).text).toBe(
      "<|im_start|>hi<tool_call>x<|im_end|>",
    );
    // Consecutive added tokens without spaces between them: their raw contents (no effect for ByteLevel).
    const run2 = run(tok, [[151_644, 151_645, 151_657]], {
      params: { skipSpecialTokens: false, spacesBetweenSpecialTokens: false },
    });
    expect(run2.text).toBe("<|im_start|><|im_end|><tool_call>");
  });

  it("leaves the EOS / stop token out of the text unless include_stop_str_in_output", async () => {
    const ids = [...(await tok.encode("Done.")), 151_645];
    const params = { skipSpecialTokens: false };
    expect(run(tok, [ids], { params, finish: FinishReason.STOP }).text).toBe("Done.");
    expect(
      run(tok, [ids], { params: { ...params, includeStopStrInOutput: true }, finish: FinishReason.STOP })
        .text,
    ).toBe("Done.<|im_end|>");
    // A stop_token_ids hit on an ordinary token: the engine reports it as stop_reason; its text is left out.
    const dot = (await tok.encode("."))[0]!;
    const r = run(tok, [[...(await tok.encode("a b")), dot]], { finish: FinishReason.STOP, stopReason: dot });
    expect(r.text).toBe("a b");
    expect(r.last.stopReason).toBe(dot);
    expect(r.last.tokenIds.at(-1)).toBe(dot);
    // LENGTH does not drop the last token.
    expect(run(tok, [[...(await tok.encode("a b")), dot]]).text).toBe("a b.");
  });

  it("detokenize: false gives no text and ignores stop strings", async () => {
    const ids = await tok.encode("x STOP y");
    const r = run(tok, [ids], { params: { detokenize: false, stop: ["STOP"] } });
    expect(r.text).toBe("");
    expect(r.last.finishReason).toBe(FinishReason.LENGTH);
  });
});
