// `metrics`: stays connected and serves vLLM's Prometheus metrics (@vllm-engine-core/metrics) on /metrics and
// the engines' health on /health over plain HTTP, until Ctrl-C. The engines' scheduler gauges need them to log
// stats (vLLM's default; not with --disable-log-stats); the request metrics count this connection's requests,
// which are none here: the command watches the engines, it sends nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { EngineCoreClient } from "@vllm-engine-core/client";
import { int, type ParsedArgs, str } from "../args.js";
import type { Command } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { CliRuntimeError, CliUsageError, EXIT_OK } from "../errors.js";
import { untilAborted } from "../lifecycle.js";

const CMD = "metrics";
/** vLLM serves /metrics on its API port, 8000 unless `--port` says otherwise. */
const DEFAULT_PORT = 8000;

async function loadMetrics() {
  try {
    return (await import("@vllm-engine-core/metrics")).instrument;
  } catch (error) {
    throw new CliRuntimeError(
      `\`metrics\` needs @vllm-engine-core/metrics (${(error as Error).message}); install it next to the CLI`,
    );
  }
}

/** /metrics: the registry's exposition; /health: 200 while the engines live, 503 with the error once one died. */
function handler(client: EngineCoreClient, scrape: () => Promise<{ contentType: string; body: string }>) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
    } else if (path === "/metrics") {
      scrape().then(
        ({ contentType, body }) => response.writeHead(200, { "content-type": contentType }).end(body),
        (error: unknown) =>
          response.writeHead(500, { "content-type": "text/plain" }).end(`${(error as Error).message}\n`),
      );
    } else if (path === "/health") {
      const error = client.healthError;
      if (error === undefined) response.writeHead(200).end();
      else response.writeHead(503, { "content-type": "text/plain" }).end(`${error.message}\n`);
    } else {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found: try /metrics or /health\n");
    }
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new CliRuntimeError(
          `cannot listen on ${host}:${port} (${error.code ?? error.message}); pick another --port or --host`,
        ),
      ),
    );
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

/** The mock engine's model name (the client config's `modelName` with --mock). */
const MOCK_MODEL_NAME = "mock";

/**
 * vLLM's `model_name` label is `served_model_name`, which defaults to the model argument
 * (vllm/config/model.py: `self.served_model_name = get_served_model_name(self.model, self.served_model_name)`).
 * The engines do not report their model (EngineCoreReadyResponse has no such field), so it is asked for:
 * never an empty label.
 */
function modelLabel(args: ParsedArgs, mock: boolean): string {
  // get_served_model_name: an empty served name falls back to the model too.
  const name = str(args, "served-model-name") || str(args, "model") || (mock ? MOCK_MODEL_NAME : undefined);
  if (name === undefined) {
    throw new CliUsageError(
      "`metrics` needs --model NAME (the model the engines serve, as given to `vllm serve`) or " +
        "--served-model-name NAME: it is vLLM's model_name label, and the engines do not report it",
      CMD,
    );
  }
  return name;
}

export const metricsCommand: Command = {
  spec: {
    name: CMD,
    summary:
      "stay connected and serve vLLM's Prometheus metrics on /metrics and the engines' health on /health",
    connects: true,
    flags: [
      { name: "host", type: "string", value: "HOST", help: "address to listen on (default 127.0.0.1)" },
      {
        name: "port",
        type: "string",
        value: "N",
        help: `port to listen on (default ${DEFAULT_PORT}; 0 picks one)`,
      },
      {
        name: "model",
        type: "string",
        value: "NAME",
        help: "the model the engines serve, as given to `vllm serve` (the model_name label's default, as in vLLM)",
      },
      {
        name: "served-model-name",
        type: "string",
        value: "NAME",
        help: "the model_name label (default: --model; `mock` with --mock)",
      },
    ],
    notes: [
      "The scheduler gauges and cache counters come from the engines' SchedulerStats: run vLLM without",
      "--disable-log-stats (the mock logs stats with --mock). Ctrl-C stops it (exit 130).",
    ],
  },
  async run({ args, lifecycle, out }) {
    const plan = planConnection(args, CMD);
    const host = str(args, "host") ?? "127.0.0.1";
    const port = int(args, CMD, "port", { min: 0, max: 65_535 }) ?? DEFAULT_PORT;
    const modelName = modelLabel(args, plan.kind === "mock");
    const instrument = await loadMetrics();
    if (plan.kind === "mock") plan.mock.logStats = true;
    const { client } = await openSession(plan, lifecycle, out.notice);
    const metrics = instrument(client, { labels: { model_name: modelName } });
    lifecycle.add({ close: async () => metrics.close() });
    const server = createServer(
      handler(client, async () => ({
        contentType: metrics.registry.contentType,
        body: await metrics.registry.metrics(),
      })),
    );
    lifecycle.add({
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    });
    const bound = await untilAborted(listen(server, host, port), lifecycle.signal);
    const origin = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
    out.notice(
      `metrics of ${client.engineCount} engine(s) on ${origin}/metrics, health on ${origin}/health; Ctrl-C to stop`,
    );
    await untilAborted(new Promise<never>(() => {}), lifecycle.signal);
    return EXIT_OK;
  },
};
