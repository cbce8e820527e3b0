// The request bodies' types, declared once as JSON Schema for fastify's route `schema.body` (ajv), each
// field typed as vLLM's pydantic request model types it (vllm/entrypoints/openai/completion/protocol.py
// CompletionRequest, chat_completion/protocol.py ChatCompletionRequest, serve/tokenize/protocol.py) and
// converted by the `lax` keyword (lax.ts) as pydantic's lax mode converts it. Fields not listed are kept and
// ignored, as vLLM's `OpenAIBaseModel` (`extra="allow"`) does. What JSON Schema cannot say (a stop string
// list that is empty, `top_logprobs` without `logprobs`, the prompt's shapes) stays in the route code.
import { INT64_MAX, INT64_MIN, type LaxSpec } from "./lax.js";

export interface FieldSchema {
  lax: LaxSpec;
  properties?: Record<string, FieldSchema>;
}

export interface BodySchema {
  lax: LaxSpec;
  properties: Record<string, FieldSchema>;
  required?: string[];
}

const f = (type: LaxSpec["type"], extra: Omit<LaxSpec, "type"> = {}): FieldSchema => ({
  lax: { type, ...extra },
});
/** `X | None`. */
const opt = (type: LaxSpec["type"], extra: Omit<LaxSpec, "type"> = {}): FieldSchema =>
  f(type, { nullable: true, ...extra });

const streamOptions: FieldSchema = {
  lax: { type: "model", name: "StreamOptions", nullable: true },
  properties: { include_usage: opt("bool"), continuous_usage_stats: opt("bool") },
};

/** Fields both CompletionRequest and ChatCompletionRequest declare with the same type. */
const generation: Record<string, FieldSchema> = {
  model: opt("str"),
  frequency_penalty: opt("float"),
  presence_penalty: opt("float"),
  logit_bias: opt("dict"),
  max_tokens: opt("int"),
  seed: opt("int", { ge: INT64_MIN, le: INT64_MAX }),
  stop: opt("union", { of: ["str", "list[str]"] }),
  stream: opt("bool"),
  stream_options: streamOptions,
  temperature: opt("float"),
  top_p: opt("float"),
  user: opt("str"),
  top_k: opt("int"),
  min_p: opt("float"),
  repetition_penalty: opt("float"),
  stop_token_ids: opt("list[int]"),
  include_stop_str_in_output: f("bool"),
  ignore_eos: f("bool"),
  min_tokens: f("int"),
  skip_special_tokens: f("bool"),
  spaces_between_special_tokens: f("bool"),
  add_special_tokens: f("bool"),
  response_format: opt("dict"),
  priority: f("int", { ge: INT64_MIN, le: INT64_MAX }),
  request_id: f("str"),
  return_tokens_as_token_ids: opt("bool"),
  // `Annotated[int, Field(ge=1)] | None`: tokens per streamed chunk, raised to the server's --stream-interval.
  stream_interval: opt("int", { ge: 1 }),
};

export const completionBodySchema: BodySchema = {
  lax: { type: "model", name: "CompletionRequest" },
  properties: {
    ...generation,
    echo: opt("bool"),
    logprobs: opt("int"),
    n: f("int"),
    suffix: opt("str"),
  },
};

export const chatBodySchema: BodySchema = {
  lax: { type: "model", name: "ChatCompletionRequest" },
  properties: {
    ...generation,
    messages: f("list"),
    logprobs: opt("bool"),
    top_logprobs: opt("int"),
    max_completion_tokens: opt("int"),
    n: opt("int"),
    tools: opt("list"),
    documents: opt("list"),
    chat_template: opt("str"),
    chat_template_kwargs: opt("dict"),
    add_generation_prompt: f("bool"),
    continue_final_message: f("bool"),
    echo: f("bool"),
  },
  required: ["messages"],
};

/** TokenizeCompletionRequest | TokenizeChatRequest: the union's common fields. */
export const tokenizeBodySchema: BodySchema = {
  lax: { type: "model", name: "TokenizeRequest" },
  properties: {
    model: opt("str"),
    add_special_tokens: f("bool"),
    return_token_strs: opt("bool"),
    add_generation_prompt: f("bool"),
    continue_final_message: f("bool"),
    chat_template_kwargs: opt("dict"),
    tools: opt("list"),
  },
};

export const detokenizeBodySchema: BodySchema = {
  lax: { type: "model", name: "DetokenizeRequest" },
  properties: { model: opt("str"), tokens: f("list[int]") },
  required: ["tokens"],
};
