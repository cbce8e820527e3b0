// The fastify app: OpenAI's generation endpoints plus vLLM's own (/health, /version, /tokenize,
// /detokenize, /v1/models), every error in OpenAI's JSON shape.
import { createRequire } from "node:module";
import type { Tokenizer } from "@vllm-engine-core/text";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { chatCompletions } from "./chat.js";
import { completions } from "./completions.js";
import type { EngineClient, ServerContext } from "./context.js";
import { OpenAIApiError, toApiError } from "./errors.js";
import { metricsRoute } from "./metrics.js";
import { parserServing } from "./parser-options.js";
import type { SseStats } from "./sse.js";
import { tokenizeRoutes } from "./tokenize.js";

const VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version;

export interface ServerOptions {
  client: EngineClient;
  tokenizer: Tokenizer;
  /** The model directory the tokenizer came from (`root` in /v1/models). */
  modelPath: string;
  /** The name clients pass as `model`; default `modelPath`, as vLLM's `--served-model-name`. */
  servedModelName?: string;
  /** Default: the engines' `max_model_len` (the smallest, `client.maxModelLen`). */
  maxModelLen?: number;
  /** Largest request body in bytes (default 64 MiB: long prompts as token ids). */
  bodyLimit?: number;
  /** fastify's logger option (default off). */
  logger?: boolean;
  /**
   * vLLM's `--enable-auto-tool-choice`: `tool_choice` "auto" parses tool calls out of the output (needs
   * `toolCallParser`).
   */
  enableAutoToolChoice?: boolean;
  /** vLLM's `--tool-call-parser`: hermes, qwen3_coder, llama3_json, mistral, deepseek_v3, … */
  toolCallParser?: string;
  /** vLLM's `--reasoning-parser`: qwen3, deepseek_r1. */
  reasoningParser?: string;
}

declare module "fastify" {
  interface FastifyInstance {
    /** SSE counters of this server (events written, writes that waited for the socket to drain). */
    sseStats: SseStats;
  }
}

export function createServer(options: ServerOptions): FastifyInstance {
  const ctx: ServerContext = {
    client: options.client,
    tokenizer: options.tokenizer,
    servedModelName: options.servedModelName ?? options.modelPath,
    modelPath: options.modelPath,
    maxModelLen: options.maxModelLen ?? options.client.maxModelLen,
    startedAt: Math.floor(Date.now() / 1000),
    sseStats: { events: 0, drainWaits: 0, maxBufferedBytes: 0 },
    ...parserServing(options, options.tokenizer),
  };
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 64 * 1024 * 1024,
    // `close()` destroys every connection, streaming ones included: an open SSE stream must not keep the
    // server (and a Ctrl-C'd `serve`) alive; each cut stream aborts its request on the engine.
    forceCloseConnections: true,
  });

  // Bad JSON, a wrong content type, a too large body, anything a route throws: OpenAI's error shape.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const api =
      error instanceof OpenAIApiError || !error.statusCode || error.statusCode >= 500
        ? toApiError(error)
        : new OpenAIApiError(
            error.statusCode,
            error.statusCode === 404 ? "NotFoundError" : "BadRequestError",
            error.message,
          );
    reply.status(api.status).send(api.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const api = new OpenAIApiError(404, "NotFoundError", `Route ${request.method} ${request.url} not found`);
    reply.status(404).send(api.toBody());
  });

  app.post("/v1/completions", (request, reply) => completions(ctx, request, reply));
  app.post("/v1/chat/completions", (request, reply) => chatCompletions(ctx, request, reply));

  // vLLM's `show_available_models` (models/serving.py): the base model's ModelCard.
  app.get("/v1/models", async () => ({
    object: "list",
    data: [
      {
        id: ctx.servedModelName,
        object: "model",
        created: ctx.startedAt,
        owned_by: "vllm",
        root: ctx.modelPath,
        parent: null,
        max_model_len: ctx.maxModelLen,
        permission: [],
      },
    ],
  }));

  // vLLM's /health: 200 while the engines live, 503 once the client recorded a fatal error.
  app.get("/health", async (_request, reply) => {
    const error = ctx.client.healthError;
    if (error === undefined || error === null) return reply.status(200).send();
    const api = toApiError(error);
    return reply.status(503).send(new OpenAIApiError(503, "ServiceUnavailableError", api.message).toBody());
  });

  app.get("/version", async () => ({ version: VERSION, vllm_version: ctx.client.vllmVersion ?? null }));

  tokenizeRoutes(app, ctx);
  metricsRoute(app, options.client, ctx.servedModelName); // issue 12
  app.decorate("sseStats", ctx.sseStats);
  return app;
}
