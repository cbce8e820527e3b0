// Reads the Hugging Face files of a model directory that the text layer needs: tokenizer.json (the
// tokenizer itself), tokenizer_config.json and special_tokens_map.json (named special tokens, add_bos_token,
// the chat template), chat_template.jinja, and generation_config.json or, without it, config.json (EOS ids
// and sampling defaults), the way transformers and vLLM read them.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TokenizerLoadError } from "./errors.js";

/** The named special tokens of transformers' `special_tokens_map` (only those that are set). */
export interface SpecialTokensMap {
  bos_token?: string;
  eos_token?: string;
  unk_token?: string;
  sep_token?: string;
  pad_token?: string;
  cls_token?: string;
  mask_token?: string;
  additional_special_tokens?: string[];
}

/** One entry of tokenizer.json's `added_tokens`. */
export interface AddedTokenEntry {
  id: number;
  content: string;
  special: boolean;
}

/** A named chat template (tokenizer_config.json may carry a list of them). */
export interface NamedChatTemplate {
  name: string;
  template: string;
}

export interface ModelFiles {
  directory: string;
  /** tokenizer.json as text (handed to the native tokenizer) and the parts of it the text layer reads. */
  tokenizerJsonText: string;
  addedTokens: AddedTokenEntry[];
  /** The largest token id of tokenizer.json (model vocabulary and added tokens), -1 if none. */
  maxTokenId: number;
  /** tokenizer.json's `decoder` and `pre_tokenizer` sections (null when absent). */
  decoder: Record<string, unknown> | null;
  preTokenizer: Record<string, unknown> | null;
  tokenizerConfig: Record<string, unknown>;
  specialTokens: SpecialTokensMap;
  /** `add_bos_token` / `add_eos_token` from tokenizer_config.json when set there. */
  addBosToken: boolean | undefined;
  addEosToken: boolean | undefined;
  /** The chat templates by name ("default" for a single one). */
  chatTemplates: NamedChatTemplate[];
  /** generation_config.json, or the generation-relevant part of config.json without it ({} if neither). */
  generationConfig: Record<string, unknown>;
  /** Which file `generationConfig` came from. */
  generationConfigSource: "generation_config.json" | "config.json" | null;
}

function readJson(path: string, required: boolean): Record<string, unknown> | undefined {
  if (!existsSync(path)) {
    if (required) throw new TokenizerLoadError({ path, detail: "the file does not exist" });
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new TokenizerLoadError({ path, detail: `cannot read it (${(error as Error).message})` });
  }
  return parseJsonObject(path, text);
}

function parseJsonObject(path: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TokenizerLoadError({ path, detail: `it is not valid JSON (${(error as Error).message})` });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TokenizerLoadError({ path, detail: "expected a JSON object" });
  }
  return value as Record<string, unknown>;
}

/** A special token is written as a string or as a serialized AddedToken `{ content, ... }`. */
function tokenContent(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { content?: unknown }).content === "string"
  )
    return (value as { content: string }).content;
  return undefined;
}

const NAMED_SPECIAL_TOKENS = [
  "bos_token",
  "eos_token",
  "unk_token",
  "sep_token",
  "pad_token",
  "cls_token",
  "mask_token",
] as const;

function specialTokensOf(config: Record<string, unknown>, into: SpecialTokensMap): void {
  for (const key of NAMED_SPECIAL_TOKENS) {
    if (!(key in config)) continue;
    const content = tokenContent(config[key]);
    if (content === undefined) delete into[key];
    else into[key] = content;
  }
  const additional = config.additional_special_tokens;
  if (Array.isArray(additional)) {
    into.additional_special_tokens = additional.map(tokenContent).filter((t): t is string => t !== undefined);
  }
}

function chatTemplatesOf(directory: string, config: Record<string, unknown>): NamedChatTemplate[] {
  // transformers saves the template as chat_template.jinja next to the config, and that file wins.
  const jinjaPath = join(directory, "chat_template.jinja");
  if (existsSync(jinjaPath)) return [{ name: "default", template: readFileSync(jinjaPath, "utf8") }];
  const value = config.chat_template;
  if (typeof value === "string") return [{ name: "default", template: value }];
  if (Array.isArray(value)) {
    return value
      .filter(
        (entry): entry is { name: string; template: string } =>
          entry !== null &&
          typeof entry === "object" &&
          typeof (entry as { name?: unknown }).name === "string" &&
          typeof (entry as { template?: unknown }).template === "string",
      )
      .map((entry) => ({ name: entry.name, template: entry.template }));
  }
  return [];
}

function addedTokensOf(path: string, tokenizerJson: Record<string, unknown>): AddedTokenEntry[] {
  const list = tokenizerJson.added_tokens ?? [];
  if (!Array.isArray(list)) throw new TokenizerLoadError({ path, detail: "`added_tokens` is not a list" });
  return list.map((entry: { id?: unknown; content?: unknown; special?: unknown }, i) => {
    if (typeof entry?.id !== "number" || typeof entry.content !== "string") {
      throw new TokenizerLoadError({
        path,
        detail: `added_tokens[${i}] has no numeric id or string content`,
      });
    }
    return { id: entry.id, content: entry.content, special: entry.special === true };
  });
}

/**
 * vLLM's `try_get_generation_config`: generation_config.json, else `GenerationConfig.from_model_config`
 * of config.json (which carries its `eos_token_id`, at the top level or in `text_config`).
 */
function generationConfigOf(
  directory: string,
): Pick<ModelFiles, "generationConfig" | "generationConfigSource"> {
  const generation = readJson(join(directory, "generation_config.json"), false);
  if (generation !== undefined)
    return { generationConfig: generation, generationConfigSource: "generation_config.json" };
  const model = readJson(join(directory, "config.json"), false);
  if (model === undefined) return { generationConfig: {}, generationConfigSource: null };
  const text = (model.text_config ?? {}) as Record<string, unknown>;
  const eos = model.eos_token_id ?? text.eos_token_id;
  return {
    generationConfig: eos == null ? {} : { eos_token_id: eos },
    generationConfigSource: "config.json",
  };
}

/** The largest id in tokenizer.json: `model.vocab` is a token → id map (BPE, WordPiece) or a list (Unigram). */
function maxIdOf(tokenizerJson: Record<string, unknown>, added: AddedTokenEntry[]): number {
  let max = -1;
  for (const t of added) if (t.id > max) max = t.id;
  const vocab = (tokenizerJson.model as { vocab?: unknown } | undefined)?.vocab;
  if (Array.isArray(vocab)) max = Math.max(max, vocab.length - 1);
  else if (vocab !== null && typeof vocab === "object") {
    for (const id of Object.values(vocab)) if (typeof id === "number" && id > max) max = id;
  }
  return max;
}

/** Reads and checks the model directory's tokenizer files. */
export function readModelFiles(directory: string): ModelFiles {
  if (!existsSync(directory))
    throw new TokenizerLoadError({ path: directory, detail: "the directory does not exist" });
  const tokenizerPath = join(directory, "tokenizer.json");
  if (!existsSync(tokenizerPath)) {
    throw new TokenizerLoadError({
      path: tokenizerPath,
      detail: "the file does not exist (only fast tokenizers saved as tokenizer.json are supported)",
    });
  }
  const tokenizerJsonText = readFileSync(tokenizerPath, "utf8");
  const tokenizerJson = parseJsonObject(tokenizerPath, tokenizerJsonText);
  const tokenizerConfig = readJson(join(directory, "tokenizer_config.json"), false) ?? {};
  // transformers reads the named tokens from tokenizer_config.json, then special_tokens_map.json over them.
  const specialTokens: SpecialTokensMap = {};
  specialTokensOf(tokenizerConfig, specialTokens);
  const specialTokensMap = readJson(join(directory, "special_tokens_map.json"), false);
  if (specialTokensMap !== undefined) specialTokensOf(specialTokensMap, specialTokens);
  const bool = (v: unknown) => (typeof v === "boolean" ? v : undefined);
  const section = (v: unknown) =>
    v !== null && typeof v === "object" ? (v as Record<string, unknown>) : null;
  const addedTokens = addedTokensOf(tokenizerPath, tokenizerJson);
  return {
    directory,
    tokenizerJsonText,
    addedTokens,
    maxTokenId: maxIdOf(tokenizerJson, addedTokens),
    decoder: section(tokenizerJson.decoder),
    preTokenizer: section(tokenizerJson.pre_tokenizer),
    tokenizerConfig,
    specialTokens,
    addBosToken: bool(tokenizerConfig.add_bos_token),
    addEosToken: bool(tokenizerConfig.add_eos_token),
    chatTemplates: chatTemplatesOf(directory, tokenizerConfig),
    ...generationConfigOf(directory),
  };
}
