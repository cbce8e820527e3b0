import { describe, expect, it } from "vitest";
import { hasRepetition } from "../src/scheduler.js";
import {
  EchoTokenStream,
  MinTokensMask,
  modelFreeToken,
  promptSeed,
  ScriptedTokenStream,
} from "../src/tokens.js";
import { readScript } from "../src/wire.js";

describe("scripted tokens (extra_args.scripted_token_ids), as the model-free executor plays them", () => {
  it("reads the script from extra_args, bigint ids included", () => {
    expect(readScript({ scripted_token_ids: [1n, 2, 3n] })).toEqual({
      script: { tokenIds: [1, 2, 3], end: "continue" },
      error: null,
    });
    expect(readScript({ scripted_token_ids: [5], scripted_end: "eos" }).script).toEqual({
      tokenIds: [5],
      end: "eos",
    });
    expect(readScript({ other: 1 })).toEqual({ script: null, error: null });
    expect(readScript(null)).toEqual({ script: null, error: null });
    // The engine's decoder gives extra_args as a Map.
    expect(readScript(new Map<string, unknown>([["scripted_token_ids", [4n]]])).script).toEqual({
      tokenIds: [4],
      end: "continue",
    });
  });

  it("a malformed script is an error with the executor's text (vLLM's engine dies of it)", () => {
    expect(readScript({ scripted_token_ids: [11, "x"] }).error).toBe(
      "model-free executor: extra_args.scripted_token_ids must be a list of integer token ids, got [11, 'x']",
    );
    expect(readScript({ scripted_token_ids: [true] }).error).toMatch(/must be a list of integer token ids/);
    expect(readScript({ scripted_token_ids: [151_645, -1] }).error).toBe(
      "model-free executor: extra_args.scripted_token_ids has ids outside the vocabulary: [-1]",
    );
    // Ids of a bigger vocabulary than the mock's own (a Qwen3 tokenizer's) are taken.
    expect(readScript({ scripted_token_ids: [151_645] }).script?.tokenIds).toEqual([151_645]);
    expect(readScript({ scripted_token_ids: [1], scripted_end: "stop" }).error).toBe(
      "model-free executor: extra_args.scripted_end must be 'continue' or 'eos', got 'stop'",
    );
    expect(readScript({ scripted_text: "hi" }).error).toMatch(/scripted_text needs the model's tokenizer/);
  });

  // Reference values from tools/vllm-executor/vllm_model_free/script.py (prompt_seed, deterministic_token,
  // TokenChooser), computed with Python.
  it("after the script, the executor's deterministic ids: a digest of the prompt and the output index", () => {
    const seed = promptSeed([1000, 1001, 1002, 1003, 1004, 1005]);
    expect(seed).toBe(705252846);
    expect([0, 1, 2, 3].map((i) => modelFreeToken(seed, i))).toEqual([27226, 4145, 12064, 19983]);
    expect(modelFreeToken(seed, 2, 151_936)).toBe(5064);
    expect(promptSeed([])).toBe(18652613);
    expect(promptSeed([4294967295, 5])).toBe(1166469393);

    const cont = new ScriptedTokenStream({ tokenIds: [7, 8], end: "continue" }, 99, (i) =>
      modelFreeToken(seed, i),
    );
    expect([cont.next(), cont.next(), cont.next(), cont.next()]).toEqual([7, 8, 12064, 19983]);
    const eos = new ScriptedTokenStream({ tokenIds: [7, 8], end: "eos" }, 99, () => -1);
    expect([eos.next(), eos.next(), eos.next(), eos.next()]).toEqual([7, 8, 99, 99]);
    // "eos" without any EOS known: the ids continue.
    const noEos = new ScriptedTokenStream({ tokenIds: [7], end: "eos" }, null, (i) =>
      modelFreeToken(seed, i),
    );
    expect([noEos.next(), noEos.next()]).toEqual([7, 4145]);
    const echo = new EchoTokenStream([1, 2]);
    const echoed = new ScriptedTokenStream({ tokenIds: [7], end: "continue" }, 99, () => echo.next());
    expect([echoed.next(), echoed.next(), echoed.next()]).toEqual([7, 1, 2]);
  });

  it("min_tokens masks stop ids: a masked id becomes the next deterministic id, as TokenChooser does", () => {
    const seed = promptSeed([1000, 1001, 1002, 1003, 1004, 1005]);
    const script = new ScriptedTokenStream({ tokenIds: [11, 7, 22, 7], end: "continue" }, 7, (i) =>
      modelFreeToken(seed, i),
    );
    const masked = MinTokensMask.around(script, 3, new Set([7]), seed);
    expect([0, 1, 2, 3, 4].map(() => masked.next())).toEqual([11, 4145, 22, 7, 27902]);
  });

  it("detects repetition as check_sequence_repetition does", () => {
    const params = { maxPatternSize: 2, minPatternSize: 1, minCount: 3 };
    expect(hasRepetition([5, 6, 5, 6, 5], params)).toBe(false);
    expect(hasRepetition([5, 6, 5, 6, 5, 6], params)).toBe(true);
    expect(hasRepetition([1, 4, 4, 4], params)).toBe(true);
    expect(hasRepetition([5, 6, 5, 6, 5, 6], { ...params, minCount: 1 })).toBe(false);
    expect(hasRepetition([5, 6, 5, 6, 5, 6], { maxPatternSize: 0, minPatternSize: 0, minCount: 3 })).toBe(
      false,
    );
  });
});
