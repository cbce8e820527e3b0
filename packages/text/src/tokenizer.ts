// A model's tokenizer, loaded from its directory. Encoding runs in Hugging Face's own Rust `tokenizers`
// (npm `tokenizers`, the native binding) on libuv's thread pool, so a long prompt never blocks the event
// loop; decoding is synchronous over the same library's token strings and decoder (or the ByteLevel fast
// path), which is what the per-token detokenizer needs. See the README for how this library was chosen.
import { Tokenizer as NativeTokenizer } from "tokenizers";
import { ByteLevelDecodeStream, ByteLevelVocab, isByteLevelDecoder } from "./byte-level.js";
import {
  type ChatMessage,
  type ChatTemplateOptions,
  CompiledChatTemplate,
  selectChatTemplate,
} from "./chat-template.js";
import { ConcurrencyLimit } from "./concurrency-limit.js";
import { type DecodeFn, seedContext, type TokenDecodeStream, WindowDecodeStream } from "./decode-stream.js";
import { TokenizerLoadError } from "./errors.js";
import {
  type AddedTokenEntry,
  type ModelFiles,
  readModelFiles,
  type SpecialTokensMap,
} from "./model-files.js";

export interface EncodeOptions {
  /** Add the tokenizer's special tokens (its post-processor, e.g. BOS). Default true, as in transformers. */
  addSpecialTokens?: boolean;
}

export interface TokenizerOptions {
  /**
   * At most this many encodes run at once on libuv's thread pool; the others wait, in order. Default (and
   * `Infinity`) no bound: the pool's size, 4 unless `UV_THREADPOOL_SIZE` says otherwise, bounds them. 1
   * keeps tokenizing a burst of long prompts to one core, leaving the others to the event loop and the
   * engine (vLLM's `--renderer-num-workers`, whose default is 1).
   */
  maxConcurrentEncodes?: number;
}

export interface DecodeOptions {
  /** Drop special added tokens from the text. Default false, as in `tokenizers`' decode. */
  skipSpecialTokens?: boolean;
}

/** Sampling defaults a model's generation_config.json sets (vLLM's `get_diff_sampling_param`). */
export interface GenerationDefaults {
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  maxTokens?: number;
}

/** What a rendered chat prompt became. */
export interface ChatPrompt {
  prompt: string;
  promptTokenIds: number[];
}

function idList(value: unknown): number[] {
  if (typeof value === "number" && Number.isInteger(value)) return [value];
  if (Array.isArray(value))
    return value.filter((v): v is number => typeof v === "number" && Number.isInteger(v));
  return [];
}

function generationDefaultsOf(files: ModelFiles): GenerationDefaults {
  if (files.generationConfigSource !== "generation_config.json") return {};
  const g = files.generationConfig;
  const out: GenerationDefaults = {};
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const set = <K extends keyof GenerationDefaults>(key: K, v: number | undefined) => {
    if (v !== undefined) out[key] = v;
  };
  set("temperature", num(g.temperature));
  set("topP", num(g.top_p));
  set("topK", num(g.top_k));
  set("minP", num(g.min_p));
  set("repetitionPenalty", num(g.repetition_penalty));
  set("maxTokens", num(g.max_new_tokens));
  return out;
}

/** vLLM's `_get_leading_space_marker`: a Metaspace pre-tokenizer (alone or in a Sequence) and its marker. */
function metaspaceMarker(preTokenizer: Record<string, unknown> | null): string | null {
  if (preTokenizer === null) return null;
  const replacement = (p: Record<string, unknown>) =>
    typeof p.replacement === "string" ? p.replacement : "▁";
  if (preTokenizer.type === "Metaspace") return replacement(preTokenizer);
  if (preTokenizer.type === "Sequence" && Array.isArray(preTokenizer.pretokenizers)) {
    const meta = (preTokenizer.pretokenizers as Record<string, unknown>[]).find(
      (p) => p?.type === "Metaspace",
    );
    if (meta !== undefined) return replacement(meta);
  }
  return null;
}

/** vLLM's `_restore_leading_spaces`: one space per leading marker of the raw token that decode dropped. */
function restoreLeadingSpaces(rawToken: string, text: string, marker: string): string {
  let markers = 0;
  for (const ch of rawToken) {
    if (ch !== marker) break;
    markers++;
  }
  if (markers === 0) return text;
  const existing = text.length - text.replace(/^ +/, "").length;
  const missing = markers - existing;
  return missing > 0 ? " ".repeat(missing) + text : text;
}

export class Tokenizer {
  readonly directory: string;
  /** Named special tokens as transformers' `special_tokens_map` has them (also chat template variables). */
  readonly specialTokens: Readonly<SpecialTokensMap>;
  /** Every added token of tokenizer.json by id (special or not). */
  readonly addedTokens: ReadonlyMap<number, Readonly<AddedTokenEntry>>;
  /** `tokenizer.eos_token_id`: the id of tokenizer_config's `eos_token`; the engine's primary EOS. */
  readonly eosTokenId: number | null;
  readonly bosTokenId: number | null;
  readonly padTokenId: number | null;
  /** generation_config.json's `eos_token_id` (or config.json's without it), as a list. */
  readonly generationEosTokenIds: readonly number[];
  /** tokenizer_config.json's `add_bos_token` / `add_eos_token` when set (encoding follows tokenizer.json). */
  readonly addBosToken: boolean | undefined;
  readonly addEosToken: boolean | undefined;
  readonly generationDefaults: Readonly<GenerationDefaults>;
  readonly tokenizerConfig: Readonly<Record<string, unknown>>;
  /** Number of ids the tokenizer knows (vocabulary plus added tokens), `len(tokenizer)`. */
  readonly vocabSize: number;
  /** The largest token id plus one. */
  readonly maxTokenId: number;

  readonly #native: NativeTokenizer;
  readonly #files: ModelFiles;
  /** `id_to_token` of every id: the strings the library's decode hands to its decoder. */
  readonly #tokens: (string | undefined)[];
  readonly #special: Uint8Array;
  readonly #decoder: { decode(tokens: string[]): string } | null;
  readonly #byteLevel: ByteLevelVocab | undefined;
  readonly #templates = new Map<string, CompiledChatTemplate>();
  /** `_get_leading_space_marker`: the Metaspace replacement character, or null. */
  readonly #spaceMarker: string | null;

  /** Bounds the native encodes in flight (a limit of Infinity when unbounded). */
  readonly #encodes: ConcurrencyLimit;

  private constructor(files: ModelFiles, native: NativeTokenizer, encodes: ConcurrencyLimit) {
    this.#encodes = encodes;
    this.directory = files.directory;
    this.#files = files;
    this.#native = native;
    this.specialTokens = Object.freeze({ ...files.specialTokens });
    this.addedTokens = new Map(files.addedTokens.map((t) => [t.id, Object.freeze({ ...t })]));
    this.tokenizerConfig = files.tokenizerConfig;
    this.addBosToken = files.addBosToken;
    this.addEosToken = files.addEosToken;
    this.generationDefaults = Object.freeze(generationDefaultsOf(files));
    const idOf = (token: string | undefined) =>
      token === undefined ? null : (native.tokenToId(token) ?? null);
    this.eosTokenId = idOf(files.specialTokens.eos_token);
    this.bosTokenId = idOf(files.specialTokens.bos_token);
    this.padTokenId = idOf(files.specialTokens.pad_token);
    this.generationEosTokenIds = Object.freeze(idList(files.generationConfig.eos_token_id));
    this.vocabSize = native.getVocabSize(true);

    const maxId = files.maxTokenId;
    this.maxTokenId = maxId + 1;
    this.#tokens = new Array(maxId + 1);
    for (let id = 0; id <= maxId; id++) this.#tokens[id] = native.idToToken(id) ?? undefined;
    // tokenizers' decode skips a token whose string is the content of a special added token.
    const specialContents = new Set(files.addedTokens.filter((t) => t.special).map((t) => t.content));
    this.#special = new Uint8Array(maxId + 1);
    for (let id = 0; id <= maxId; id++) {
      const token = this.#tokens[id];
      if (token !== undefined && specialContents.has(token)) this.#special[id] = 1;
    }
    this.#decoder = native.getDecoder();
    this.#byteLevel = isByteLevelDecoder(files.decoder) ? new ByteLevelVocab(this.#tokens) : undefined;
    this.#spaceMarker = metaspaceMarker(files.preTokenizer);
  }

  /** Loads tokenizer.json, tokenizer_config.json, special_tokens_map.json and generation_config.json. */
  static fromDirectory(directory: string, options: TokenizerOptions = {}): Tokenizer {
    // Checked first: a bad option fails before the (slow) load.
    const encodes = new ConcurrencyLimit(
      options.maxConcurrentEncodes ?? Number.POSITIVE_INFINITY,
      "maxConcurrentEncodes",
    );
    const files = readModelFiles(directory);
    let native: NativeTokenizer;
    try {
      native = NativeTokenizer.fromString(files.tokenizerJsonText);
    } catch (error) {
      throw new TokenizerLoadError({
        path: `${directory}/tokenizer.json`,
        detail: `the tokenizers library rejected it (${(error as Error).message})`,
      });
    }
    files.tokenizerJsonText = "";
    return new Tokenizer(files, native, encodes);
  }

  /** True for the ByteLevel fast path of the incremental decoder. */
  get byteLevel(): boolean {
    return this.#byteLevel !== undefined;
  }

  /** The chat template names available ("default" for a single template). */
  get chatTemplateNames(): string[] {
    return this.#files.chatTemplates.map((t) => t.name);
  }

  /** The default chat template, or null for a model without one. */
  get chatTemplate(): string | null {
    return selectChatTemplate(this.#files.chatTemplates, { name: undefined, hasTools: false });
  }

  /**
   * Token ids of `text`. Runs on the native thread pool (asynchronous): tokenizing a long prompt does not
   * block the event loop, so other streams keep flowing.
   */
  encode(text: string, options: EncodeOptions = {}): Promise<number[]> {
    const addSpecialTokens = options.addSpecialTokens ?? true;
    return this.#encodes.run(async () =>
      (await this.#native.encode(text, null, { addSpecialTokens })).getIds(),
    );
  }

  /** `maxConcurrentEncodes` (Infinity when unbounded). */
  get maxConcurrentEncodes(): number {
    return this.#encodes.limit;
  }

  /** Text of `ids`, exactly as `tokenizers`' `decode(ids, skip_special_tokens)` gives it. */
  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    return this.#decodeFn(options.skipSpecialTokens ?? false)(ids);
  }

  /** The token string of `id` (`id_to_token`), or undefined for an id the tokenizer does not know. */
  idToToken(id: number): string | undefined {
    return this.#tokens[id];
  }

  tokenToId(token: string): number | undefined {
    return this.#native.tokenToId(token) ?? undefined;
  }

  /**
   * Each id decoded on its own, as vLLM shows tokens in logprobs (`convert_ids_list_to_tokens` in
   * vllm/tokenizers/detokenizer_utils.py): `decode([id])`, with the leading spaces a Metaspace
   * pre-tokenizer's marker stood for put back.
   */
  tokenStrings(ids: readonly number[]): string[] {
    const marker = this.#spaceMarker;
    return ids.map((id) => {
      const text = this.decode([id]);
      if (marker === null) return text;
      return restoreLeadingSpaces(this.#tokens[id] ?? "", text, marker);
    });
  }

  /** True when `id` is a special added token (dropped by `skipSpecialTokens`). */
  isSpecialToken(id: number): boolean {
    return this.#special[id] === 1;
  }

  #decodeFn(skipSpecialTokens: boolean): DecodeFn {
    const tokens = this.#tokens;
    const special = this.#special;
    const byteLevel = this.#byteLevel;
    const decoder = this.#decoder;
    return (ids) => {
      const kept: number[] = [];
      for (const id of ids) {
        if (tokens[id] === undefined || (skipSpecialTokens && special[id] === 1)) continue;
        kept.push(id);
      }
      if (byteLevel !== undefined) return byteLevel.decode(kept);
      const strings = kept.map((id) => tokens[id]!);
      return decoder === null ? strings.join(" ") : decoder.decode(strings);
    };
  }

  /**
   * A per-request incremental decoder primed with the prompt (vLLM's FastIncrementalDetokenizer stream).
   * `generic` forces the window algorithm over the library's decode even for ByteLevel tokenizers.
   */
  createDecodeStream(
    promptTokenIds: readonly number[],
    options: { skipSpecialTokens: boolean; generic?: boolean },
  ): TokenDecodeStream {
    const decode = this.#decodeFn(options.skipSpecialTokens);
    if (this.#byteLevel === undefined || options.generic === true) {
      return new WindowDecodeStream(decode, promptTokenIds);
    }
    const seed = seedContext(decode, promptTokenIds);
    const special = this.#special;
    const tokens = this.#tokens;
    const skip = options.skipSpecialTokens
      ? (id: number) => tokens[id] === undefined || special[id] === 1
      : (id: number) => tokens[id] === undefined;
    return new ByteLevelDecodeStream(this.#byteLevel, skip, seed.ids.slice(seed.prefixIndex));
  }

  /**
   * Renders `messages` with the model's chat template the way transformers' `apply_chat_template` does
   * (same Jinja environment settings, the special tokens as variables).
   */
  applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
    const template = this.#compiledTemplate(options);
    return template.render(messages, options, this.specialTokens);
  }

  /**
   * Renders the chat and tokenizes it without adding special tokens (the template writes them), as
   * vLLM's chat endpoint does (`add_special_tokens` defaults to false there).
   */
  async encodeChat(
    messages: readonly ChatMessage[],
    options: ChatTemplateOptions & { addSpecialTokens?: boolean } = {},
  ): Promise<ChatPrompt> {
    const prompt = this.applyChatTemplate(messages, options);
    const promptTokenIds = await this.encode(prompt, { addSpecialTokens: options.addSpecialTokens ?? false });
    return { prompt, promptTokenIds };
  }

  #compiledTemplate(options: ChatTemplateOptions): CompiledChatTemplate {
    const source =
      options.chatTemplate ??
      selectChatTemplate(this.#files.chatTemplates, {
        name: options.chatTemplateName,
        hasTools: options.tools != null,
      });
    let compiled = this.#templates.get(source ?? "");
    if (compiled === undefined) {
      compiled = new CompiledChatTemplate(source);
      this.#templates.set(source ?? "", compiled);
    }
    return compiled;
  }
}
