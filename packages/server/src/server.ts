// The fastify app: OpenAI's generation endpoints plus vLLM's own (/health, /version, /tokenize,
// /detokenize, /v1/models), every error in OpenAI's JSON shape.

import type { IncomingMessage, Server } from "node:http";
import type { Server as HttpsServer } from "node:https";
import { createRequire } from "node:module";
import type { MetricsSnapshot } from "@vllm-engine-core/metrics";
import type { Tokenizer } from "@vllm-engine-core/text";
import Fastify, {
  type FastifyError,
  type FastifyHttpOptions,
  type FastifyHttpsOptions,
  type FastifyInstance,
} from "fastify";
import { apiKeyAuth } from "./auth.js";
import { chatBodySchema, completionBodySchema } from "./body-schema.js";
import { chatCompletions } from "./chat.js";
import { completions } from "./completions.js";
import type { EngineClient, ServerContext } from "./context.js";
import { type CorsOptions, corsPlugin } from "./cors.js";
import { InvalidServerOptionsError, LoraLoadError, OpenAIApiError, toApiError } from "./errors.js";
import { laxPlugin } from "./lax.js";
import { type MetricsAcrossServers, metricsRoute } from "./metrics.js";
import { type LoraModule, ServedModels } from "./models.js";
import { parserServing } from "./parser-options.js";
import { requestIdHeaders } from "./request-id.js";
import type { SseStats } from "./sse.js";
import { tokenizeRoutes } from "./tokenize.js";
import { jsonInvalid, pyErrorsOfAjv, validationError } from "./validation-error.js";

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
   * vLLM's `--api-key` (several allowed; `VLLM_API_KEY` is the CLI's fallback): `/v1/*` then needs
   * `Authorization: Bearer <key>` (auth.ts). Empty strings are ignored; none: no check.
   */
  apiKeys?: readonly string[];
  /** vLLM's `--allowed-origins`, `--allowed-methods`, `--allowed-headers`, `--allow-credentials`. */
  cors?: CorsOptions;
  /** vLLM's `--enable-request-id-headers`: every response carries `X-Request-Id`. */
  enableRequestIdHeaders?: boolean;
  /**
   * vLLM's `--root-path`: the prefix a path-routing proxy adds. Paths under it are served with it removed,
   * other paths as they are (starlette's `root_path` routing).
   */
  rootPath?: string;
  /** vLLM's `--return-tokens-as-token-ids`: logprobs tokens as `token_id:N` (a request's own field wins). */
  returnTokensAsTokenIds?: boolean;
  /**
   * vLLM's `--stream-interval` (default 1): tokens per streamed chunk. A request's `stream_interval` may raise
   * it, not lower it; the first and the last chunk go out at once.
   */
  streamInterval?: number;
  /** vLLM's `--lora-modules` (parsed: `parseLoraModules`): loaded on the engines when the server starts. */
  loraModules?: readonly LoraModule[];
  /** TLS (vLLM's `--ssl-keyfile`, `--ssl-certfile`, `--ssl-ca-certs`, `--ssl-cert-reqs`): PEM contents. */
  https?: {
    key: string | Buffer;
    cert: string | Buffer;
    ca?: string | Buffer;
    requestCert?: boolean;
    rejectUnauthorized?: boolean;
  };
  /**
   * vLLM's `--enable-auto-tool-choice`: `tool_choice` "auto" parses tool calls out of the output (needs
   * `toolCallParser`).
   */
  enableAutoToolChoice?: boolean;
  /** vLLM's `--tool-call-parser`: hermes, qwen3_coder, llama3_json, mistral, deepseek_v3, … */
  toolCallParser?: string;
  /** vLLM's `--reasoning-parser`: qwen3, deepseek_r1. */
  reasoningParser?: string;
  /**
   * Default true: `loraModules` are loaded on the engines when the server starts. False when another server
   * on the same connection loads them (the CLI's `--api-server-count`): this one only serves their names.
   */
  loadLoraModules?: boolean;
  /**
   * Several servers on one connection (the CLI's `--api-server-count`): GET /metrics answers every server's
   * metrics, combined, instead of this server's own.
   */
  metricsAcrossServers?: MetricsAcrossServers;
}

declare module "fastify" {
  interface FastifyInstance {
    /** SSE counters of this server (events written, writes that waited for the socket to drain). */
    sseStats: SseStats;
    /**
     * This server's own Prometheus metrics as JSON (`getMetricsAsJSON()`, structured-cloneable), for
     * combining several servers' (`aggregateMetrics`); undefined when the client cannot be instrumented.
     */
    metricsSnapshot: (() => Promise<MetricsSnapshot>) | undefined;
  }
}

function streamIntervalOption(value: number | undefined): number {
  if (value === undefined) return 1;
  if (!Number.isInteger(value) || value < 1) {
    throw new InvalidServerOptionsError(
      `streamInterval must be an integer of at least 1 (vLLM's --stream-interval), got ${value}`,
    );
  }
  return value;
}

export function createServer(options: ServerOptions): FastifyInstance {
  const servedModelName = options.servedModelName ?? options.modelPath;
  const maxModelLen = options.maxModelLen ?? options.client.maxModelLen;
  const models = new ServedModels(servedModelName, options.modelPath, maxModelLen);
  const loras = models.addLoras(options.loraModules ?? []);
  const ctx: ServerContext = {
    client: options.client,
    tokenizer: options.tokenizer,
    servedModelName,
    modelPath: options.modelPath,
    maxModelLen,
    startedAt: Math.floor(Date.now() / 1000),
    sseStats: { events: 0, drainWaits: 0, maxBufferedBytes: 0 },
    models,
    returnTokensAsTokenIds: options.returnTokensAsTokenIds ?? false,
    streamInterval: streamIntervalOption(options.streamInterval),
    ...parserServing(options, options.tokenizer),
  };
  const rootPath = (options.rootPath ?? "").replace(/\/+$/, "");
  const fastifyOptions: FastifyHttpOptions<Server> = {
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 64 * 1024 * 1024,
    // `close()` destroys every connection, streaming ones included: an open SSE stream must not keep the
    // server (and a Ctrl-C'd `serve`) alive; each cut stream aborts its request on the engine.
    forceCloseConnections: true,
    ...(rootPath === ""
      ? {}
      : { rewriteUrl: (req: IncomingMessage) => stripRootPath(req.url ?? "/", rootPath) }),
    // Body schemas (body-schema.ts) convert as pydantic's lax mode does, with the `lax` keyword, not
    // ajv's own coercion; every error is listed, as pydantic lists them.
    ajv: {
      customOptions: { coerceTypes: false, allErrors: true, verbose: true, strictTypes: false },
      plugins: [laxPlugin],
    },
  };
  // An https server answers the same routes; fastify types it apart, the routes need only the common part.
  const app = (options.https
    ? Fastify({ ...fastifyOptions, https: options.https } as unknown as FastifyHttpsOptions<HttpsServer>)
    : Fastify(fastifyOptions)) as unknown as FastifyInstance;

  // Bad JSON, a wrong content type, a too large body, anything a route throws: OpenAI's error shape.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    const api = error.validation
      ? validationError(pyErrorsOfAjv(error.validation))
      : error instanceof OpenAIApiError || !error.statusCode || error.statusCode >= 500
        ? toApiError(error)
        : new OpenAIApiError(
            error.statusCode,
            error.statusCode === 404 ? "NotFoundError" : "BadRequestError",
            error.message,
          );
    reply.status(api.status).send(api.toBody());
  });

  // JSON bodies through fastify's own parser (prototype-poisoning checks kept); a body that does not parse is
  // parsed again only to learn where it broke, which vLLM reports (json_invalid at ('body', position)).
  const defaultJsonParser = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    defaultJsonParser(request, body as string, (error, value) => {
      if (error === null) return done(null, value);
      try {
        JSON.parse(body as string);
      } catch (syntax) {
        return done(jsonInvalid(syntax as Error), undefined);
      }
      done(error, undefined);
    });
  });

  // Hook order is vLLM's middleware order, outermost first: X-Request-Id, then the API key, then CORS
  // (so a 401 carries X-Request-Id but no CORS headers, as in vLLM).
  if (options.enableRequestIdHeaders) requestIdHeaders(app);
  apiKeyAuth(app, options.apiKeys ?? []);
  corsPlugin(app, options.cors ?? {});
  // Streams write their head on the raw response (reply.hijack()): headers set on the reply so far (CORS)
  // are copied there first.
  app.addHook("preHandler", async (_request, reply) => {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value);
    }
  });
  // vLLM's `init_static_loras`: every adapter is loaded on the engines before the server answers.
  if (loras.length > 0 && options.loadLoraModules !== false) {
    app.addHook("onReady", async () => {
      const addLora = options.client.addLora?.bind(options.client);
      if (addLora === undefined)
        throw new LoraLoadError(loras[0]!.loraName, "this engine client cannot add LoRAs");
      for (const lora of loras) {
        let ok: boolean;
        try {
          ok = await addLora(lora);
        } catch (error) {
          throw new LoraLoadError(lora.loraName, (error as Error).message);
        }
        if (!ok) throw new LoraLoadError(lora.loraName, "an engine answered add_lora with False");
      }
    });
  }
  app.setNotFoundHandler((request, reply) => {
    const api = new OpenAIApiError(404, "NotFoundError", `Route ${request.method} ${request.url} not found`);
    reply.status(404).send(api.toBody());
  });

  app.post("/v1/completions", { schema: { body: completionBodySchema } }, (request, reply) =>
    completions(ctx, request, reply),
  );
  app.post("/v1/chat/completions", { schema: { body: chatBodySchema } }, (request, reply) =>
    chatCompletions(ctx, request, reply),
  );

  // vLLM's `show_available_models` (models/serving.py): the base model's card, then the adapters'.
  app.get("/v1/models", async () => models.list());

  // vLLM's /health: 200 while the engines live, 503 once the client recorded a fatal error.
  app.get("/health", async (_request, reply) => {
    const error = ctx.client.healthError;
    if (error === undefined || error === null) return reply.status(200).send();
    const api = toApiError(error);
    return reply.status(503).send(new OpenAIApiError(503, "ServiceUnavailableError", api.message).toBody());
  });

  app.get("/version", async () => ({ version: VERSION, vllm_version: ctx.client.vllmVersion ?? null }));

  tokenizeRoutes(app, ctx);
  const metricsSnapshot = metricsRoute(
    app,
    options.client,
    ctx.servedModelName,
    options.metricsAcrossServers,
  );
  app.decorate("sseStats", ctx.sseStats);
  app.decorate("metricsSnapshot", metricsSnapshot);
  return app;
}

/** `/prefix/rest` → `/rest` (and `/prefix` → `/`); other paths unchanged. */
export function stripRootPath(url: string, rootPath: string): string {
  if (url === rootPath || url.startsWith(`${rootPath}?`)) return `/${url.slice(rootPath.length)}`;
  if (url.startsWith(`${rootPath}/`)) return url.slice(rootPath.length);
  return url;
}
