// What every route needs: the engine client, the tokenizer, the served model's name and limits; plus the
// shared steps of a generation request (model check, engine call, disconnect handling, usage).
import { randomUUID } from "node:crypto";
import type { CallRequest, EngineCoreClient } from "@vllm-engine-core/client";
import { type TextRequest, TextStream, type Tokenizer } from "@vllm-engine-core/text";
import type { FastifyReply, FastifyRequest } from "fastify";
import { CheckedOutputProcessor } from "./generation-error.js";
import type { ModelTarget, ServedModels } from "./models.js";
import type { Body } from "./params.js";
import type { ReasoningParser } from "./reasoning/index.js";
import { requestIdHeader } from "./request-id.js";
import type { SseStats } from "./sse.js";
import type { ToolServing } from "./tool-calls.js";

/** The part of EngineCoreClient the server uses (`addLora` only with `loraModules`). */
export type EngineClient = Pick<EngineCoreClient, "call" | "healthError" | "maxModelLen" | "vllmVersion"> &
  Partial<Pick<EngineCoreClient, "addLora">>;

export interface ServerContext {
  client: EngineClient;
  tokenizer: Tokenizer;
  /** The name clients pass as `model` (vLLM's `--served-model-name`, default the model path). */
  servedModelName: string;
  /** The model directory (`root` in /v1/models). */
  modelPath: string;
  maxModelLen: number;
  /** When the server started (`created` of /v1/models). */
  startedAt: number;
  sseStats: SseStats;
  /** The base model and the LoRA adapters (`--lora-modules`). */
  models: ServedModels;
  /** `--return-tokens-as-token-ids`. */
  returnTokensAsTokenIds: boolean;
  /** `--stream-interval`: the least tokens per streamed chunk. */
  streamInterval: number;
  /** `--enable-auto-tool-choice` / `--tool-call-parser` (chat tool calling). */
  toolServing: ToolServing;
  /** `--reasoning-parser` (chat reasoning), when set. */
  reasoningParser: ReasoningParser | undefined;
}

/** vLLM's `random_uuid()`: uuid4 hex. */
export function randomId(): string {
  return randomUUID().replaceAll("-", "");
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * vLLM's `OpenAIServingModels.check_model` (vllm/entrypoints/openai/models/serving.py): no model, or the
 * served one, is fine; any other name is 404 NotFoundError with param "model".
 */
export function checkModel(ctx: ServerContext, body: Body): ModelTarget {
  return ctx.models.resolve(body.model);
}

/** What a generation request is known by and sent with, besides its prompt and sampling parameters. */
export interface RequestTarget {
  /** The response's `id`: `<prefix>-<X-Request-Id | request_id | random>` (vLLM's `_base_request_id`). */
  id: string;
  /** The response's `model`: the served name, or the LoRA adapter's. */
  model: string;
  /** Spread into the engine request: the id made unique, the client's id kept, LoRA, priority. */
  engine: {
    requestId: string;
    externalReqId: string;
    loraRequest: ModelTarget["loraRequest"];
    priority: number;
  };
  /** Logprobs tokens as `token_id:N` (the request's `return_tokens_as_token_ids`, else the server flag). */
  tokensAsIds: boolean;
}

/**
 * The model check, ids and per-request options of a generation request, as vLLM's serving code does them:
 * the id from the X-Request-Id header, else the body's `request_id`, else random (`_base_request_id`);
 * the engine's id that id plus "-" and 8 random hex characters, the id itself as `external_req_id`
 * (vllm/v1/engine/input_processor.py `assign_request_id`), so two requests may share a client id.
 * `priority` goes to the engine as given: vLLM's frontend refuses nothing (its scheduler uses it under
 * `--scheduling-policy priority` and ignores it otherwise); the schema bounds it to int64.
 */
/**
 * The engine's id for a request the client knows as `externalId`, as vLLM's `assign_request_id`
 * (vllm/v1/engine/input_processor.py) makes it: the id plus "-" and 8 random hex characters, the client's id
 * kept as `external_req_id`, so that two requests may share a client id.
 */
export function engineIds(externalId: string): { requestId: string; externalReqId: string } {
  return { requestId: `${externalId}-${randomId().slice(0, 8)}`, externalReqId: externalId };
}

export function requestTarget(
  ctx: ServerContext,
  request: FastifyRequest,
  body: Body,
  prefix: string,
): RequestTarget {
  const target = checkModel(ctx, body);
  const base =
    requestIdHeader(request) ?? (typeof body.request_id === "string" ? body.request_id : randomId());
  const id = `${prefix}-${base}`;
  const tokensAsIds =
    typeof body.return_tokens_as_token_ids === "boolean"
      ? body.return_tokens_as_token_ids
      : ctx.returnTokensAsTokenIds;
  return {
    id,
    model: target.name,
    engine: {
      ...engineIds(id),
      loraRequest: target.loraRequest,
      priority: typeof body.priority === "number" ? body.priority : 0,
    },
    tokensAsIds,
  };
}

/** Usage in a streamed chunk: vLLM writes chunks without unset or null fields, so no `prompt_tokens_details`. */
export interface StreamUsage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
}

/** Usage in a whole response (vLLM's `UsageInfo.model_dump()`: `prompt_tokens_details` null). */
export interface Usage extends StreamUsage {
  prompt_tokens_details: null;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { ...streamUsage(promptTokens, completionTokens), prompt_tokens_details: null };
}

/**
 * Usage for a streamed chunk (`continuous_usage_stats` on each chunk, `include_usage`'s last chunk): vLLM
 * serializes those with `exclude_unset=True` / `exclude_none=True` (completion/serving.py and
 * chat_completion/serving.py stream generators), so the null `prompt_tokens_details` is left out.
 */
export function streamUsage(promptTokens: number, completionTokens: number): StreamUsage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
  };
}

/**
 * Aborts the request on the engine as soon as the HTTP client goes away: the response's 'close' before it
 * finished writing means the connection dropped (Node's `request` 'close' fires once the body is read, so
 * the response is the one to watch). The signal goes to `client.call`, which aborts on the engine at once.
 */
export function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const raw = reply.raw;
  raw.once("close", () => {
    if (!raw.writableFinished) controller.abort(new Error("the HTTP client disconnected"));
  });
  return controller.signal;
}

/**
 * Sends the request to the engine and returns its text stream (the request is aborted if that fails). A
 * request the engine finishes with ERROR throws vLLM's GenerationError from the read (generation-error.ts).
 */
export async function startGeneration(
  ctx: ServerContext,
  request: CallRequest & TextRequest,
  signal: AbortSignal,
  streamInterval = 1,
): Promise<TextStream> {
  const outputs = await ctx.client.call(request, { signal });
  try {
    return new TextStream(outputs, new CheckedOutputProcessor(ctx.tokenizer, request), { streamInterval });
  } catch (error) {
    await outputs.return().catch(() => {});
    throw error;
  }
}
