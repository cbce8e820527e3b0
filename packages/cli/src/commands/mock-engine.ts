// `mock-engine`: the mock engine as a standalone process that dials a frontend's handshake address (like
// `vllm serve --headless`), so the other commands can be tried against it from a second terminal. It prints
// what the engine does (one line per handshake step and request) or, with --json, the engine's raw events.
import { bool, int, type ParsedArgs, str } from "../args.js";
import type { Command } from "../command.js";
import { CliRuntimeError, CliUsageError, EXIT_OK } from "../errors.js";
import { untilAborted } from "../lifecycle.js";
import { loadMockEngine, type MockEngineEvent, mockCleanup } from "../mock-engine.js";

const CMD = "mock-engine";
/** vLLM's default --data-parallel-rpc-port. */
const DEFAULT_HANDSHAKE = "tcp://127.0.0.1:29550";

function engineIndices(args: ParsedArgs): number[] {
  const count = int(args, CMD, "engine-count", { min: 1, max: 64 });
  const size = int(args, CMD, "data-parallel-size", { min: 1, max: 64 });
  if (count !== undefined && size !== undefined && count !== size) {
    throw new CliUsageError(`--engine-count ${count} and --data-parallel-size ${size} disagree`, CMD);
  }
  const start = int(args, CMD, "engine-start-index", { min: 0, max: 65_535 }) ?? 0;
  return Array.from({ length: count ?? size ?? 1 }, (_, i) => start + i);
}

function describe(event: MockEngineEvent): string | undefined {
  const e = event as MockEngineEvent & Record<string, unknown>;
  const who = e.engineIndex === undefined ? "mock engine" : `engine ${e.engineIndex}`;
  switch (e.event) {
    case "hello":
      return `${who}: HELLO sent, waiting for the frontend's INIT`;
    case "init":
      return `${who}: INIT received`;
    case "ready":
      return `${who}: READY, serving (like a headless vLLM engine, it will not handshake with another frontend)`;
    case "add":
      return `${who}: request ${String(e.requestId)} (${String(e.promptTokens)} prompt tokens, max_tokens ${String(e.maxTokens)})`;
    case "finished":
      return `${who}: request ${String(e.requestId)} finished (${String(e.finishReason)}, ${String(e.tokens)} tokens)`;
    case "abort":
      return `${who}: abort ${JSON.stringify(e.requestIds)}`;
    case "utility":
      return `${who}: utility ${String(e.method)}`;
    case "fault":
      return `${who}: fault ${String(e.kind)}${e.detail ? `: ${String(e.detail)}` : ""}`;
    default:
      return undefined;
  }
}

export const mockEngineCommand: Command = {
  spec: {
    name: CMD,
    summary:
      "run the mock engine standalone: it dials a frontend's handshake address like `vllm serve --headless`",
    connects: false,
    flags: [
      {
        name: "handshake-address",
        type: "string",
        value: "tcp://H:P",
        help: `the frontend's handshake address to dial (default ${DEFAULT_HANDSHAKE})`,
      },
      { name: "data-parallel-address", type: "string", value: "H", help: "vLLM spelling: handshake host" },
      { name: "data-parallel-rpc-port", type: "string", value: "P", help: "vLLM spelling: handshake port" },
      {
        name: "input-address",
        type: "string",
        value: "A",
        help: "bootstrapped: connect and register on this input address (with --output-address)",
      },
      {
        name: "output-address",
        type: "string",
        value: "B",
        help: "bootstrapped: push outputs to this address",
      },
      { name: "engine-count", type: "string", value: "N", help: "engines in this process (default 1)" },
      { name: "data-parallel-size", type: "string", value: "N", help: "vLLM spelling of --engine-count" },
      {
        name: "engine-start-index",
        type: "string",
        value: "I",
        help: "index of the first engine (default 0)",
      },
      { name: "step-ms", type: "string", value: "MS", help: "duration of one engine step (default 5)" },
      {
        name: "tokens-per-step",
        type: "string",
        value: "N",
        help: "tokens per request per step (default 1)",
      },
      { name: "json", type: "boolean", help: "print the engine's raw JSON events instead of descriptions" },
    ],
    notes: [
      "Like a headless vLLM engine, it does the handshake once: it serves the first frontend that connects and",
      "keeps running after that frontend has gone (Ctrl-C stops it). Start a new one for the next command.",
    ],
  },
  async run({ args, lifecycle, out }) {
    const input = str(args, "input-address");
    const output = str(args, "output-address");
    const dpAddress = str(args, "data-parallel-address");
    const dpPort = int(args, CMD, "data-parallel-rpc-port", { min: 1, max: 65_535 });
    let handshake = str(args, "handshake-address");
    if (dpAddress !== undefined || dpPort !== undefined) {
      if (handshake !== undefined) {
        throw new CliUsageError(
          "choose one of --handshake-address and --data-parallel-address/-rpc-port",
          CMD,
        );
      }
      handshake = `tcp://${dpAddress ?? "127.0.0.1"}:${dpPort ?? 29550}`;
    }
    const bootstrapped = input !== undefined || output !== undefined;
    if (bootstrapped && (input === undefined || output === undefined)) {
      throw new CliUsageError("bootstrapped mode needs both --input-address and --output-address", CMD);
    }
    if (bootstrapped && handshake !== undefined) {
      throw new CliUsageError("choose one of a handshake address and --input-address/--output-address", CMD);
    }
    const engines = engineIndices(args);
    const stepMs = int(args, CMD, "step-ms", { min: 0, max: 60_000 });
    const tokensPerStep = int(args, CMD, "tokens-per-step", { min: 1, max: 1024 });
    const json = bool(args, "json");

    const { startMockEngine } = await loadMockEngine();
    const starting = startMockEngine({
      ...(bootstrapped
        ? { mode: "bootstrapped", inputAddress: input!, outputAddress: output! }
        : { mode: "handshake", handshakeAddress: handshake ?? DEFAULT_HANDSHAKE }),
      engineIndices: engines,
      ...(stepMs !== undefined ? { stepMs } : {}),
      ...(tokensPerStep !== undefined ? { tokensPerStep } : {}),
    });
    lifecycle.add(mockCleanup(starting));
    const engine = await untilAborted(starting, lifecycle.signal);
    const target = bootstrapped
      ? `input ${input}, output ${output}`
      : `handshake ${handshake ?? DEFAULT_HANDSHAKE}`;
    if (!json) {
      out.line(
        `mock engine (pid ${engine.pid}) with engine(s) ${engines.join(",")} dialing ${target}; Ctrl-C to stop`,
      );
    }
    // Print every event (past ones first), then wait for the engine to exit or for Ctrl-C.
    let printed = 0;
    const flush = () => {
      for (; printed < engine.events.length; printed++) {
        const event = engine.events[printed]!;
        const text = json ? JSON.stringify(event) : describe(event);
        if (text !== undefined) out.line(text);
      }
    };
    flush();
    const waiter = engine
      .waitForEvent(
        () => {
          flush();
          return false;
        },
        2 ** 31 - 1,
      )
      .catch(() => undefined);
    const exit = await untilAborted(engine.exited, lifecycle.signal);
    await waiter;
    flush();
    if (exit.code !== 0) {
      throw new CliRuntimeError(`the mock engine exited with code ${exit.code} (signal ${exit.signal})`);
    }
    return EXIT_OK;
  },
};
