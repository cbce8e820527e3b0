// What every route needs: the engine client, the tokenizer, the served model's name and limits; plus the
// shared steps of a generation request (model check, engine call, disconnect handling, usage).
import { randomUUID } from "node:crypto";
import type { CallRequest, EngineCoreClient } from "@vllm-engine-core/client";
import { type TextRequest, type TextStream, type Tokenizer, textStream } from "@vllm-engine-core/text";
import type { FastifyReply } from "fastify";
import { OpenAIApiError } from "./errors.js";
import type { Body } from "./params.js";
import type { ReasoningParser } from "./reasoning/index.js";
import type { SseStats } from "./sse.js";
import type { ToolServing } from "./tool-calls.js";

/** The part of EngineCoreClient the server uses. */
export type EngineClient = Pick<EngineCoreClient, "call" | "healthError" | "maxModelLen" | "vllmVersion">;

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
export function checkModel(ctx: ServerContext, body: Body): void {
  const model = body.model;
  if (model === undefined || model === null || model === "" || model === ctx.servedModelName) return;
  throw new OpenAIApiError(404, "NotFoundError", `The model \`${String(model)}\` does not exist.`, "model");
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
  prompt_tokens_details: null;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: null,
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

/** Sends the request to the engine and returns its text stream (the request is aborted if that fails). */
export async function startGeneration(
  ctx: ServerContext,
  request: CallRequest & TextRequest,
  signal: AbortSignal,
): Promise<TextStream> {
  const outputs = await ctx.client.call(request, { signal });
  try {
    return textStream(ctx.tokenizer, request, outputs);
  } catch (error) {
    await outputs.return().catch(() => {});
    throw error;
  }
}
