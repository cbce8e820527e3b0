// From connection flags to a connected EngineCoreClient: picks the transport (handshake-owner, with vLLM's
// `--data-parallel-*` spellings, or bootstrapped), or starts the mock engine on a free port (`--mock`), and
// connects under the command's abort signal so that Ctrl-C mid-handshake closes every socket at once.
import { BindError, EngineCoreClient, type EngineCoreClientConfig } from "@vllm-engine-core/client";
import { bool, int, list, num, type ParsedArgs, str } from "./args.js";
import { CliUsageError } from "./errors.js";
import { type Lifecycle, untilAborted } from "./lifecycle.js";
import { freePort, loadMockEngine, type MockEngineProcess, mockCleanup } from "./mock-engine.js";

/** vLLM's frontend waits this long for engines (vllm/envs.py VLLM_ENGINE_READY_TIMEOUT_S, default 600). */
const VLLM_READY_TIMEOUT_S = 600;
/** The mock engine answers at once; a stuck one should fail fast. */
const MOCK_READY_TIMEOUT_S = 30;
/** Print a "waiting for engines" line on stderr when connecting takes longer than this. */
const WAITING_NOTICE_MS = 1_000;
/** --mock picks its handshake port; how many ports it tries when another process takes one first. */
const MOCK_BIND_ATTEMPTS = 5;

export interface MockFlags {
  engines: number;
  stepMs: number;
  faults: MockFault[];
  /** The mock generates the prompt's tokens back (`serve --mock`: readable text). */
  echoPrompt?: boolean;
  /** The mock sends SchedulerStats every step, as vLLM does without --disable-log-stats (`metrics --mock`). */
  logStats?: boolean;
}

/** The mock engine's handshake faults (tools/mock-engine options.ts MockEngineFaults), by flag value. */
const MOCK_FAULTS = {
  "bad-hello": "badHello",
  "no-ready": "noReady",
  "no-registration": "noRegistration",
} as const;
type MockFault = keyof typeof MOCK_FAULTS;

export type ConnectionPlan =
  | { kind: "client"; config: EngineCoreClientConfig; describe: string }
  | { kind: "mock"; mock: MockFlags; readyTimeoutMs: number };

const WILDCARD_HOSTS = new Set(["*", "0.0.0.0", "::", "[::]"]);

function hostOf(address: string): string | undefined {
  return /^tcp:\/\/(\[[^\]]+\]|[^:/]+):/.exec(address)?.[1];
}

/** Reads and cross-checks the connection flags; throws CliUsageError naming the conflict. */
export function planConnection(args: ParsedArgs, command: string): ConnectionPlan {
  const handshake = str(args, "handshake-address");
  const dpAddress = str(args, "data-parallel-address");
  const dpPort = int(args, command, "data-parallel-rpc-port", { min: 1, max: 65_535 });
  const input = str(args, "input-address");
  const output = str(args, "output-address");
  const mock = bool(args, "mock");

  const engineCount = int(args, command, "engine-count", { min: 1, max: 65_536 });
  const dpSize = int(args, command, "data-parallel-size", { min: 1, max: 65_536 });
  if (engineCount !== undefined && dpSize !== undefined && engineCount !== dpSize) {
    throw new CliUsageError(
      `--engine-count ${engineCount} and --data-parallel-size ${dpSize} disagree (they are the same setting)`,
      command,
    );
  }
  const count = engineCount ?? dpSize;
  const startIndex = int(args, command, "engine-start-index", { min: 0, max: 65_535 });
  const startRank = int(args, command, "data-parallel-start-rank", { min: 0, max: 65_535 });
  if (startIndex !== undefined && startRank !== undefined && startIndex !== startRank) {
    throw new CliUsageError(
      `--engine-start-index ${startIndex} and --data-parallel-start-rank ${startRank} disagree (they are the same setting)`,
      command,
    );
  }
  const start = startIndex ?? startRank;
  const timeoutS = num(args, command, "ready-timeout-s", {
    ok: (n) => n > 0 && n * 1000 <= 2 ** 31 - 1,
    expected: "a positive number of seconds",
  });
  const clientIndex = int(args, command, "client-index", { min: 0 });

  const modes = [
    handshake !== undefined && "--handshake-address",
    (dpAddress !== undefined || dpPort !== undefined) && "--data-parallel-address/--data-parallel-rpc-port",
    (input !== undefined || output !== undefined) && "--input-address/--output-address",
    mock && "--mock",
  ].filter((m): m is string => typeof m === "string");
  if (modes.length === 0) {
    throw new CliUsageError(
      "no engines to talk to: give --handshake-address tcp://H:P (or --data-parallel-address H " +
        "--data-parallel-rpc-port P, as passed to `vllm serve --headless`), --input-address/--output-address, or --mock",
      command,
    );
  }
  if (modes.length > 1) throw new CliUsageError(`choose one of ${modes.join(" and ")}`, command);

  const mockOnly = ["mock-engines", "mock-step-ms", "mock-fault"].filter((f) => args.values[f] !== undefined);
  if (!mock && mockOnly.length > 0) {
    throw new CliUsageError(`--${mockOnly[0]} only applies with --mock`, command);
  }
  const bootstrappedOnly = [
    "engine-start-index",
    "data-parallel-start-rank",
    "client-index",
    "coordinator-address",
  ];
  const handshakeOnly = ["advertised-host", "coordinator"];
  const misplaced = (flags: string[]) => flags.find((f) => args.values[f] !== undefined);

  if (mock) {
    const stray = misplaced([...bootstrappedOnly, ...handshakeOnly]);
    if (stray) throw new CliUsageError(`--${stray} does not apply with --mock`, command);
    const engines = int(args, command, "mock-engines", { min: 1, max: 64 }) ?? count ?? 1;
    if (count !== undefined && count !== engines) {
      throw new CliUsageError(`--mock-engines ${engines} and --engine-count ${count} disagree`, command);
    }
    const faults = list(args, "mock-fault").map((f) => {
      if (!(f in MOCK_FAULTS)) {
        throw new CliUsageError(
          `--mock-fault must be one of ${Object.keys(MOCK_FAULTS).join(", ")}, got ${JSON.stringify(f)}`,
          command,
        );
      }
      return f as MockFault;
    });
    return {
      kind: "mock",
      mock: { engines, stepMs: int(args, command, "mock-step-ms", { min: 0, max: 60_000 }) ?? 5, faults },
      readyTimeoutMs: (timeoutS ?? MOCK_READY_TIMEOUT_S) * 1000,
    };
  }

  const readyTimeoutMs = (timeoutS ?? defaultReadyTimeoutS()) * 1000;
  if (input !== undefined || output !== undefined) {
    if (input === undefined || output === undefined) {
      throw new CliUsageError("bootstrapped mode needs both --input-address and --output-address", command);
    }
    const stray = misplaced(handshakeOnly);
    if (stray) throw new CliUsageError(`--${stray} only applies with a handshake address`, command);
    const coordinator = str(args, "coordinator-address");
    const config: EngineCoreClientConfig = {
      transport: {
        mode: "bootstrapped",
        inputAddress: input,
        outputAddress: output,
        readyTimeoutMs,
        ...(count !== undefined ? { engineCount: count } : {}),
        ...(start !== undefined ? { engineStartIndex: start } : {}),
      },
      ...(clientIndex !== undefined ? { clientIndex } : {}),
      ...(coordinator !== undefined ? { coordinator: { mode: "external", address: coordinator } } : {}),
    };
    return { kind: "client", config, describe: `input ${input}, output ${output}` };
  }

  let handshakeAddress: string;
  if (handshake !== undefined) {
    handshakeAddress = handshake;
  } else {
    if (dpAddress === undefined || dpPort === undefined) {
      throw new CliUsageError(
        "--data-parallel-address and --data-parallel-rpc-port go together (the engines' own values)",
        command,
      );
    }
    handshakeAddress = `tcp://${dpAddress.includes(":") && !dpAddress.startsWith("[") ? `[${dpAddress}]` : dpAddress}:${dpPort}`;
  }
  const stray = misplaced(bootstrappedOnly);
  if (stray)
    throw new CliUsageError(`--${stray} only applies with --input-address/--output-address`, command);
  // vLLM binds the frontend's input/output sockets on the DP master host the engines were given
  // (vllm/v1/engine/utils.py launch_core_engines → get_engine_client_zmq_addr(local_only, host)).
  const host = str(args, "advertised-host") ?? hostOf(handshakeAddress);
  const advertisedHost = host === undefined || WILDCARD_HOSTS.has(host) ? undefined : host;
  const config: EngineCoreClientConfig = {
    transport: {
      mode: "handshake-owner",
      handshakeAddress,
      readyTimeoutMs,
      ...(count !== undefined ? { engineCount: count } : {}),
      ...(advertisedHost !== undefined ? { advertisedHost: advertisedHost.replace(/^\[|\]$/g, "") } : {}),
    },
    ...(bool(args, "coordinator") ? { coordinator: { mode: "inproc" } } : {}),
  };
  return { kind: "client", config, describe: `handshake ${handshakeAddress}` };
}

function defaultReadyTimeoutS(): number {
  const env = Number(process.env.VLLM_ENGINE_READY_TIMEOUT_S);
  return Number.isFinite(env) && env > 0 ? env : VLLM_READY_TIMEOUT_S;
}

export interface Session {
  client: EngineCoreClient;
  /** The mock engine process, with --mock. */
  mock: MockEngineProcess | undefined;
}

/**
 * Connects as planned (starting the mock engine first for --mock); everything is closed by `lifecycle`.
 * `settings`: client settings that are not about the connection (`serve`'s structured-outputs backend).
 */
export async function openSession(
  plan: ConnectionPlan,
  lifecycle: Lifecycle,
  notice: (line: string) => void,
  settings: Pick<EngineCoreClientConfig, "structuredOutputs"> = {},
): Promise<Session> {
  if (plan.kind !== "mock") {
    const client = await connectClient({ ...plan.config, ...settings }, plan.describe, lifecycle, notice);
    return { client, mock: undefined };
  }
  const { startMockEngine } = await loadMockEngine();
  for (let attempt = 1; ; attempt++) {
    lifecycle.check();
    const handshakeAddress = `tcp://127.0.0.1:${await freePort()}`;
    const starting = startMockEngine({
      handshakeAddress,
      engineIndices: Array.from({ length: plan.mock.engines }, (_, i) => i),
      stepMs: plan.mock.stepMs,
      echoPrompt: plan.mock.echoPrompt === true,
      logStats: plan.mock.logStats === true,
      faults: Object.fromEntries(plan.mock.faults.map((f) => [MOCK_FAULTS[f], true])),
    });
    const stopMock = lifecycle.add(mockCleanup(starting));
    const mock = await untilAborted(starting, lifecycle.signal);
    const config: EngineCoreClientConfig = {
      ...settings,
      transport: {
        mode: "handshake-owner",
        handshakeAddress,
        engineCount: plan.mock.engines,
        readyTimeoutMs: plan.readyTimeoutMs,
      },
      modelName: "mock",
    };
    try {
      const client = await connectClient(
        config,
        `mock engine (pid ${mock.pid}) on ${handshakeAddress}`,
        lifecycle,
        notice,
      );
      return { client, mock };
    } catch (error) {
      // The port was free when the OS picked it, but it is released before the runtime binds it, and in that
      // gap any process may take it (another listener, or an outgoing connection's ephemeral port: both come
      // from the same range). The port is ours to choose, so choose again. Stopping twice is harmless: the
      // cleanup stays registered and the mock's stop is idempotent.
      if (!(error instanceof BindError) || attempt >= MOCK_BIND_ATTEMPTS) throw error;
      await stopMock.close();
    }
  }
}

/** Connects under the command's signal, saying what it waits for when that takes long. */
async function connectClient(
  config: EngineCoreClientConfig,
  describe: string,
  lifecycle: Lifecycle,
  notice: (line: string) => void,
): Promise<EngineCoreClient> {
  const count = config.transport.engineCount ?? 1;
  const timeoutMs = config.transport.readyTimeoutMs ?? 0;
  // A short bound fails fast by itself; a long one (vLLM's 600 s) deserves a word on what is awaited.
  const waiting = setTimeout(() => {
    if (timeoutMs < 3 * WAITING_NOTICE_MS) return;
    notice(
      `waiting for ${count} engine(s) on ${describe} (each handshake stage times out after ` +
        `${timeoutMs / 1000} s; Ctrl-C to cancel)`,
    );
  }, WAITING_NOTICE_MS);
  try {
    const client = await EngineCoreClient.connect(config, { signal: lifecycle.signal });
    lifecycle.add({ close: () => client.shutdown() });
    return client;
  } finally {
    clearTimeout(waiting);
  }
}
