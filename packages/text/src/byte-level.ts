// A faster `DecodeStream` for tokenizers whose decoder is Hugging Face's ByteLevel (GPT-2, Llama 3, Qwen,
// DeepSeek...). That decoder maps every token to bytes and decodes their concatenation as lossy UTF-8
// (tokenizers/src/pre_tokenizers/byte_level.rs, `decode_chain`), so the window of `DecodeStream` reduces
// to "the bytes since the last emitted chunk": a token that completes no pending character emits its own
// (cached) text with no decode at all. Same output as `WindowDecodeStream` over the library's decode; the
// property tests check that against the native tokenizer.
import { REPLACEMENT_CHARACTER, type TokenDecodeStream, withoutBrokenEnd } from "./decode-stream.js";

/** GPT-2's bytes_to_unicode, inverted: the character a byte-level token uses for each byte. */
function charToByte(): Map<number, number> {
  const bytes: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const chars = bytes.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n);
      n++;
    }
  }
  const map = new Map<number, number>();
  for (let i = 0; i < bytes.length; i++) map.set(chars[i]!, bytes[i]!);
  return map;
}

const CHAR_BYTES = charToByte();
const ENCODER = new TextEncoder();
// ignoreBOM: Rust's from_utf8_lossy keeps a leading U+FEFF; WHATWG's decoder would drop it.
const LOSSY = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** True when the tokenizer.json decoder is ByteLevel (alone, or the only step of a Sequence). */
export function isByteLevelDecoder(decoder: Record<string, unknown> | null): boolean {
  if (decoder === null) return false;
  if (decoder.type === "ByteLevel") return true;
  if (decoder.type === "Sequence" && Array.isArray(decoder.decoders)) {
    return decoder.decoders.length > 0 && decoder.decoders.every((d) => isByteLevelDecoder(d));
  }
  return false;
}

/** Per-token bytes and text, built on first use from the token strings the library decodes with. */
export class ByteLevelVocab {
  readonly #tokens: readonly (string | undefined)[];
  readonly #bytes: (Uint8Array | undefined)[];
  /** The token's own text when it ends cleanly (no U+FFFD at the end), else null. */
  readonly #text: (string | null | undefined)[];

  constructor(tokens: readonly (string | undefined)[]) {
    this.#tokens = tokens;
    this.#bytes = new Array(tokens.length);
    this.#text = new Array(tokens.length);
  }

  /** `ByteLevel::decode_chain` for one token: mapped bytes, or the token's UTF-8 if a char is unmapped. */
  bytes(id: number): Uint8Array {
    let bytes = this.#bytes[id];
    if (bytes !== undefined) return bytes;
    const token = this.#tokens[id];
    if (token === undefined) {
      bytes = new Uint8Array(0);
    } else {
      const out: number[] = [];
      let mapped = true;
      for (const ch of token) {
        const b = CHAR_BYTES.get(ch.codePointAt(0)!);
        if (b === undefined) {
          mapped = false;
          break;
        }
        out.push(b);
      }
      bytes = mapped ? Uint8Array.from(out) : ENCODER.encode(token);
    }
    if (id >= 0 && id < this.#bytes.length) this.#bytes[id] = bytes;
    return bytes;
  }

  text(id: number): string | null {
    let text = this.#text[id];
    if (text !== undefined) return text;
    const decoded = LOSSY.decode(this.bytes(id));
    text = decoded.endsWith(REPLACEMENT_CHARACTER) ? null : decoded;
    if (id >= 0 && id < this.#text.length) this.#text[id] = text;
    return text;
  }

  /** The lossy decode of the tokens' concatenated bytes (what the library's decode returns). */
  decode(ids: readonly number[]): string {
    if (ids.length === 1) return LOSSY.decode(this.bytes(ids[0]!));
    const parts = ids.map((id) => this.bytes(id));
    let length = 0;
    for (const p of parts) length += p.length;
    const all = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return LOSSY.decode(all);
  }
}

export class ByteLevelDecodeStream implements TokenDecodeStream {
  readonly #vocab: ByteLevelVocab;
  readonly #skip: (id: number) => boolean;
  /** Bytes after the last emitted chunk: an unfinished character, or bytes whose decode ends in U+FFFD. */
  #pending: number[] = [];
  /** UTF-16 units at the start of the pending text that are the prompt's (already its text, never emitted). */
  #promptChars = 0;

  /**
   * `skip` drops special tokens (skip_special_tokens). `pendingPrompt` are the prompt's trailing tokens
   * of an unfinished character (see `seedContext`), whose bytes the first generated tokens may complete.
   */
  constructor(vocab: ByteLevelVocab, skip: (id: number) => boolean, pendingPrompt: readonly number[]) {
    this.#vocab = vocab;
    this.#skip = skip;
    for (const id of pendingPrompt) if (!skip(id)) for (const b of vocab.bytes(id)) this.#pending.push(b);
    // Whole characters of those tokens before the unfinished one are prompt text (see seedContext).
    if (this.#pending.length > 0) {
      this.#promptChars = withoutBrokenEnd(LOSSY.decode(Uint8Array.from(this.#pending))).length;
    }
  }

  /** Pending text from where the generated text starts. */
  #generated(text: string): string {
    if (this.#promptChars === 0) return text;
    const own = text.slice(this.#promptChars);
    this.#promptChars = 0;
    return own;
  }

  step(tokenId: number): string {
    if (this.#skip(tokenId)) return "";
    const vocab = this.#vocab;
    if (this.#pending.length === 0) {
      const text = vocab.text(tokenId);
      if (text !== null) return text;
    }
    for (const b of vocab.bytes(tokenId)) this.#pending.push(b);
    const text = LOSSY.decode(Uint8Array.from(this.#pending));
    if (text === "" || text.endsWith(REPLACEMENT_CHARACTER)) return "";
    this.#pending = [];
    return this.#generated(text);
  }

  flush(): string {
    if (this.#pending.length === 0) return "";
    const text = LOSSY.decode(Uint8Array.from(this.#pending));
    this.#pending = [];
    return this.#generated(withoutBrokenEnd(text));
  }
}
