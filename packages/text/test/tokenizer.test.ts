import { rmSync } from "node:fs";
import { join } from "node:path";
import { VllmEngineCoreError } from "@vllm-engine-core/client";
import fc from "fast-check";
import { Tokenizer as NativeTokenizer } from "tokenizers";
import { afterAll, describe, expect, it } from "vitest";
import { buildCorpus } from "../bench/corpus.js";
import { Tokenizer, TokenizerLoadError, withModelStopTokens } from "../src/index.js";
import { modelDir, QWEN3_DIR, QWEN3_GENERATION_CONFIG, qwen3 } from "./helpers.js";

const native = NativeTokenizer.fromFile(join(QWEN3_DIR, "tokenizer.json"));
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

describe("loading Qwen3's tokenizer from its directory", () => {
  it("reads the special tokens, EOS and add_bos_token from tokenizer_config.json", () => {
    const tok = qwen3();
    expect(tok.vocabSize).toBe(151_669);
    expect(tok.eosTokenId).toBe(151_645); // <|im_end|>
    expect(tok.padTokenId).toBe(151_643); // <|endoftext|>
    expect(tok.bosTokenId).toBeNull(); // bos_token: null
    expect(tok.addBosToken).toBe(false);
    expect(tok.specialTokens.eos_token).toBe("<|im_end|>");
    expect(tok.specialTokens.additional_special_tokens).toContain("<|im_start|>");
    expect(tok.byteLevel).toBe(true);
    expect(tok.isSpecialToken(151_644)).toBe(true);
    expect(tok.isSpecialToken(151_665)).toBe(false); // <tool_response>: added, not special
    expect(tok.chatTemplate).toContain("<|im_start|>");
    expect(tok.generationEosTokenIds).toEqual([]);
  });

  it("combines generation_config.json's EOS ids with the tokenizer's as vLLM does", () => {
    const model = modelDir({ "generation_config.json": QWEN3_GENERATION_CONFIG });
    cleanups.push(model.remove);
    const tok = Tokenizer.fromDirectory(model.dir);
    expect(tok.generationEosTokenIds).toEqual([151_645, 151_643]);
    expect(tok.generationDefaults).toEqual({ temperature: 0.6, topK: 20, topP: 0.95 });
    // update_from_generation_config: primary EOS to the engine's EOS path, the others to stop_token_ids.
    expect(withModelStopTokens({ maxTokens: 8 }, tok)).toEqual({
      maxTokens: 8,
      eosTokenId: 151_645,
      stopTokenIds: [151_643],
      allStopTokenIds: [151_643, 151_645],
    });
    expect(withModelStopTokens({ maxTokens: 8, stopTokenIds: [7] }, tok)).toEqual({
      maxTokens: 8,
      eosTokenId: 151_645,
      stopTokenIds: [7, 151_643],
      allStopTokenIds: [7, 151_643, 151_645],
    });
    // ignore_eos: no EOS stops the request, but min_tokens still holds every one of them back.
    expect(withModelStopTokens({ maxTokens: 8, ignoreEos: true }, tok)).toEqual({
      maxTokens: 8,
      ignoreEos: true,
      allStopTokenIds: [151_643, 151_645],
    });
  });

  it("falls back to config.json's eos_token_id without generation_config.json, and reads special_tokens_map.json", () => {
    const model = modelDir({
      "config.json": { model_type: "qwen3", text_config: { eos_token_id: [151_643, 151_645] } },
      "special_tokens_map.json": {
        eos_token: { content: "<|endoftext|>", special: true },
        bos_token: "<|im_start|>",
      },
    });
    cleanups.push(model.remove);
    const tok = Tokenizer.fromDirectory(model.dir);
    expect(tok.generationEosTokenIds).toEqual([151_643, 151_645]);
    expect(tok.generationDefaults).toEqual({});
    expect(tok.eosTokenId).toBe(151_643);
    expect(tok.bosTokenId).toBe(151_644);
    expect(withModelStopTokens({}, tok)).toEqual({
      eosTokenId: 151_643,
      stopTokenIds: [151_645],
      allStopTokenIds: [151_643, 151_645],
    });
  });

  it("loads a directory without tokenizer_config.json (no EOS, no template)", () => {
    const model = modelDir({}, { copyTokenizerConfig: false });
    cleanups.push(model.remove);
    const tok = Tokenizer.fromDirectory(model.dir);
    expect(tok.eosTokenId).toBeNull();
    expect(tok.chatTemplate).toBeNull();
    expect(withModelStopTokens({ maxTokens: 1 }, tok)).toEqual({ maxTokens: 1 });
  });

  it("names the file when the directory is not a tokenizer", () => {
    const missing = join(QWEN3_DIR, "no-such-dir");
    expect(() => Tokenizer.fromDirectory(missing)).toThrow(TokenizerLoadError);
    const bad = modelDir({ "tokenizer_config.json": "{ not json" }, { copyTokenizerConfig: false });
    cleanups.push(bad.remove);
    try {
      Tokenizer.fromDirectory(bad.dir);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TokenizerLoadError);
      expect(error).toBeInstanceOf(VllmEngineCoreError);
      expect((error as TokenizerLoadError).code).toBe("TOKENIZER_LOAD");
      expect((error as TokenizerLoadError).path).toBe(join(bad.dir, "tokenizer_config.json"));
      expect((error as Error).message).toMatch(/not valid JSON/);
    }
    const noTokenizer = modelDir({});
    cleanups.push(noTokenizer.remove);
    rmSync(join(noTokenizer.dir, "tokenizer.json"));
    expect(() => Tokenizer.fromDirectory(noTokenizer.dir)).toThrow(/tokenizer\.json.*does not exist/s);
  });
});

describe("encode and decode", () => {
  it("encodes exactly as Hugging Face tokenizers (Rust) does, with and without special tokens", async () => {
    const tok = qwen3();
    for (const text of buildCorpus(1, 40)) {
      for (const addSpecialTokens of [true, false]) {
        const expected = (await native.encode(text, null, { addSpecialTokens })).getIds();
        expect(await tok.encode(text, { addSpecialTokens })).toEqual(expected);
      }
    }
    expect(await tok.encode("<|im_start|>user<|im_end|>")).toEqual([151_644, 872, 151_645]);
  });

  it("decodes synchronously exactly as the library's own decode, for any ids (property)", async () => {
    const tok = qwen3();
    const id = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 151_642 }) },
      { weight: 2, arbitrary: fc.integer({ min: 151_643, max: 151_668 }) }, // added tokens
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 255 }) }, // mostly single-byte tokens
      { weight: 1, arbitrary: fc.integer({ min: 151_669, max: 151_935 }) }, // model ids the tokenizer lacks
    );
    await fc.assert(
      fc.asyncProperty(fc.array(id, { maxLength: 40 }), fc.boolean(), async (ids, skipSpecialTokens) => {
        expect(tok.decode(ids, { skipSpecialTokens })).toBe(await native.decode(ids, skipSpecialTokens));
      }),
      { numRuns: 400 },
    );
  });

  it("shows tokens for logprobs as vLLM does (each id decoded alone)", async () => {
    const tok = qwen3();
    const ids = await tok.encode(" world 你", { addSpecialTokens: false });
    expect(tok.tokenStrings(ids)).toEqual(ids.map((id) => tok.decode([id])));
    expect(tok.tokenStrings([1_879])).toEqual([" world"]);
  });

  it("round-trips the corpus", async () => {
    const tok = qwen3();
    for (const text of buildCorpus(2, 40)) {
      const ids = await tok.encode(text);
      // NFC normalisation is the only change the Qwen3 tokenizer makes.
      expect(tok.decode(ids)).toBe(text.normalize("NFC"));
    }
  });

  it("encodes a long prompt off the event loop (timers keep firing meanwhile)", async () => {
    const tok = qwen3();
    const long = buildCorpus(3, 400).join("\n").repeat(4);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    const ids = await tok.encode(long);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(ids.length).toBeGreaterThan(100_000);
    // A synchronous encode would block every timer until it returned.
    expect(ticks).toBeGreaterThan(Math.min(5, elapsed / 10));
  });

  it("with maxConcurrentEncodes 1, a short text queued behind a long one waits for it (unbounded: it does not)", async () => {
    const long = buildCorpus(3, 400).join("\n").repeat(4);
    const finishOrder = async (tok: Tokenizer) => {
      const order: string[] = [];
      const [longIds, shortIds] = await Promise.all([
        tok.encode(long).then((ids) => {
          order.push("long");
          return ids;
        }),
        tok.encode("hello").then((ids) => {
          order.push("short");
          return ids;
        }),
      ]);
      return { order, longIds, shortIds };
    };
    const serial = Tokenizer.fromDirectory(QWEN3_DIR, { maxConcurrentEncodes: 1 });
    expect(serial.maxConcurrentEncodes).toBe(1);
    const unbounded = qwen3();
    expect(unbounded.maxConcurrentEncodes).toBe(Number.POSITIVE_INFINITY);
    const a = await finishOrder(serial);
    const b = await finishOrder(unbounded);
    expect(a.order).toEqual(["long", "short"]);
    // libuv's pool has 4 threads by default: the short encode overtakes the long one (not with one thread).
    if (Number(process.env.UV_THREADPOOL_SIZE ?? 4) > 1) expect(b.order).toEqual(["short", "long"]);
    expect(a.longIds).toEqual(b.longIds);
    expect(a.shortIds).toEqual(b.shortIds);
  });

  it("refuses a maxConcurrentEncodes that is not a positive integer, before loading anything", () => {
    expect(() => Tokenizer.fromDirectory("/nonexistent", { maxConcurrentEncodes: 0 })).toThrow(
      expect.objectContaining({ code: "INVALID_TEXT_OPTIONS", field: "maxConcurrentEncodes" }),
    );
  });
});
