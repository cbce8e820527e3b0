// Options of the mock engine, their defaults, and the CLI flags that carry them into the child process.
// The launcher turns MockEngineOptions into flags (toArgv) and the child parses them back (parseArgv), so
// the CLI and the programmatic API can never drift apart.
import { parseArgs } from "node:util";
import type { EngineCoreReadyResponse } from "@vllm-engine-core/protocol";
import { isMockVllmVersion, MOCK_VLLM_VERSIONS, type MockVllmVersion } from "./versions.js";

/**
 * Overrides for the engine's configuration as the EngineCoreReadyResponse names it (camelCase protocol
 * view). The registration carries only the fields of the played vLLM version; the others still
 * configure the engine (e.g. maxNumSeqs, worldSize for collective_rpc) without being reported.
 */
export type ReadyResponseOverrides = Partial<EngineCoreReadyResponse>;

export interface MockEngineFaults {
  /** The process kills itself with SIGKILL once an engine has completed this many steps (no sentinel). */
  crashAfterSteps?: number;
  /** After this many steps the engine sends ENGINE_CORE_DEAD on every output socket and stops. */
  deadSentinelAfterSteps?: number;
  /** After this many steps the engine stops stepping for `stallMs` (once); input keeps being read. */
  stallAfterSteps?: number;
  stallMs?: number;
  /** HELLO carries a wrong status string. */
  badHello?: boolean;
  /** The engine never sends READY on the handshake socket (it still registers and serves). */
  noReady?: boolean;
  /** The engine connects its input sockets but never sends the EngineCoreReadyResponse registration. */
  noRegistration?: boolean;
  /**
   * With a DP coordinator: the engine never subscribes to it (hangs before joining: the coordinator's
   * startup gate waits) and never sends READY.
   */
  noCoordinatorSubscription?: boolean;
  /** After this many steps one undecodable frame is pushed on every output socket (once). */
  garbageFrameAfterSteps?: number;
  /**
   * Utility calls are run this many ms after they arrive (a busy or hung engine; longer than the test = no
   * answer). Only for `utilityDelayMethods` / `utilityDelayEngines` when given, else for every call.
   */
  utilityDelayMs?: number;
  utilityDelayMethods?: string[];
  utilityDelayEngines?: number[];
}

/**
 * EngineCoreOutputs.timestamp: `monotonic` = CLOCK_MONOTONIC seconds when the outputs are built, like vLLM
 * (`time.monotonic()` in `EngineCoreOutputs.__post_init__`); `monotonic-at-send` = the same clock read just
 * before the message is encoded and sent, so a reader on the host measures send → receive on one kernel
 * clock; `wall` = epoch seconds at send.
 */
export type TimestampMode = "monotonic" | "monotonic-at-send" | "wall";
const TIMESTAMP_MODES: readonly TimestampMode[] = ["monotonic", "monotonic-at-send", "wall"];

export interface MockEngineOptions {
  mode?: "handshake" | "bootstrapped";
  handshakeAddress?: string;
  inputAddress?: string;
  outputAddress?: string;
  /**
   * Bootstrapped mode: the DP coordinator's engine-facing XPUB and PULL, as INIT's `coordinator_input` /
   * `coordinator_output` would name them (handshake mode takes them from INIT). The engine subscribes, waits
   * for the coordinator's READY and publishes its request counts there (vllm/v1/engine/core.py).
   */
  coordinatorInput?: string;
  coordinatorOutput?: string;
  engineIndices?: number[];
  stepMs?: number;
  tokensPerStep?: number;
  /** Generate the prompt's own tokens back, in order and cycling (text checkable exactly); default false. */
  echoPrompt?: boolean;
  timestamps?: TimestampMode;
  faults?: MockEngineFaults;
  readyResponse?: ReadyResponseOverrides;
  /**
   * The vLLM the engine plays (`--vllm-version`; default "main", the pinned revision): that version's
   * registration keys, EngineCoreOutput / stats layouts, utility methods and decode-time validation.
   */
  vllmVersion?: MockVllmVersion;
  /**
   * vLLM's log_stats (on unless `--disable-log-stats`): each step's EngineCoreOutputs for the first
   * client carries SchedulerStats. Off by default, like the mock before it had stats.
   */
  logStats?: boolean;
  /**
   * Load other frontends put on this engine (DP routing tests): with `logStats`, the engine steps and
   * reports this many extra waiting requests in its SchedulerStats, as an engine serving other
   * frontends' queued requests would (`--extra-waiting`); with a DP coordinator, they are also in the
   * request counts it publishes there.
   */
  extraWaiting?: number;
  /** The extra load clears this many ms after the engine started (`--extra-waiting-ms`); default never. */
  extraWaitingMs?: number;
  /** The engines (indices) the extra load applies to (`--extra-waiting-engines`); default all. */
  extraWaitingEngines?: number[];
  /**
   * Tests only: an ADD that vLLM could not decode is logged (`rejected` event) and dropped, and the
   * engine keeps reading. By default the engine goes deaf as vLLM does (its input thread dies).
   */
  surviveBadRequests?: boolean;
  /**
   * The model's EOS id (config.json's `eos_token_id`, `--eos-token-id`), as the model-free executor of vLLM's
   * real engine reads it: a script ending `"eos"` emits it when the request carries no `_eos_token_id`, and
   * `min_tokens` masks it. The engine's stop check never reads it (only the request's). Default none.
   */
  eosTokenId?: number;
  env?: Record<string, string>;
}

/** Options after defaults and validation, as the child uses them. */
export interface ResolvedOptions {
  mode: "handshake" | "bootstrapped";
  handshakeAddress: string | undefined;
  inputAddress: string | undefined;
  outputAddress: string | undefined;
  coordinatorInput: string | undefined;
  coordinatorOutput: string | undefined;
  engineIndices: number[];
  stepMs: number;
  tokensPerStep: number;
  echoPrompt: boolean;
  timestamps: TimestampMode;
  faults: MockEngineFaults;
  readyResponse: ReadyResponseOverrides;
  vllmVersion: MockVllmVersion;
  logStats: boolean;
  extraWaiting: number;
  extraWaitingMs: number | undefined;
  extraWaitingEngines: number[] | undefined;
  surviveBadRequests: boolean;
  eosTokenId: number | null;
}

/** Invalid mock-engine options (bad flag value, missing address, ...). */
export class MockEngineOptionsError extends Error {
  override readonly name = "MockEngineOptionsError";
  readonly code = "MOCK_ENGINE_OPTIONS";
  constructor(
    message: string,
    readonly option: string,
  ) {
    super(message);
  }
}

function nonNegativeInt(value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new MockEngineOptionsError(
      `${option} must be a non-negative integer, got ${String(value)}`,
      option,
    );
  }
  return value;
}

export function resolveOptions(options: MockEngineOptions): ResolvedOptions {
  const mode = options.mode ?? "handshake";
  if (mode !== "handshake" && mode !== "bootstrapped") {
    throw new MockEngineOptionsError(
      `mode must be "handshake" or "bootstrapped", got ${String(mode)}`,
      "mode",
    );
  }
  if (mode === "handshake" && !options.handshakeAddress) {
    throw new MockEngineOptionsError(
      "handshake mode needs handshakeAddress (--handshake <addr>)",
      "handshakeAddress",
    );
  }
  if (mode === "bootstrapped" && (!options.inputAddress || !options.outputAddress)) {
    throw new MockEngineOptionsError(
      "bootstrapped mode needs inputAddress and outputAddress (--input <addr> --output <addr>)",
      "inputAddress",
    );
  }
  if ((options.coordinatorInput === undefined) !== (options.coordinatorOutput === undefined)) {
    throw new MockEngineOptionsError(
      "coordinatorInput and coordinatorOutput go together (--coordinator-input / --coordinator-output)",
      "coordinatorInput",
    );
  }
  if (mode === "handshake" && options.coordinatorInput !== undefined) {
    throw new MockEngineOptionsError(
      "handshake mode takes the coordinator addresses from INIT; coordinatorInput is for bootstrapped mode",
      "coordinatorInput",
    );
  }
  const engineIndices = options.engineIndices ?? [0];
  if (engineIndices.length === 0) {
    throw new MockEngineOptionsError("engineIndices must name at least one engine", "engineIndices");
  }
  for (const index of engineIndices) {
    if (!Number.isInteger(index) || index < 0 || index > 0xffff) {
      throw new MockEngineOptionsError(
        `engine index must be an integer in [0, 65535], got ${index}`,
        "engineIndices",
      );
    }
  }
  if (new Set(engineIndices).size !== engineIndices.length) {
    throw new MockEngineOptionsError(
      `engineIndices has duplicates: ${engineIndices.join(",")}`,
      "engineIndices",
    );
  }
  const timestamps = options.timestamps ?? "monotonic";
  if (!TIMESTAMP_MODES.includes(timestamps)) {
    throw new MockEngineOptionsError(`timestamps must be one of ${TIMESTAMP_MODES.join(", ")}`, "timestamps");
  }
  const tokensPerStep = nonNegativeInt(options.tokensPerStep, "tokensPerStep", 1);
  if (tokensPerStep < 1)
    throw new MockEngineOptionsError("tokensPerStep must be at least 1", "tokensPerStep");
  const faults = options.faults ?? {};
  for (const key of [
    "crashAfterSteps",
    "deadSentinelAfterSteps",
    "stallAfterSteps",
    "stallMs",
    "garbageFrameAfterSteps",
    "utilityDelayMs",
  ] as const) {
    nonNegativeInt(faults[key], `faults.${key}`, 0);
  }
  for (const index of faults.utilityDelayEngines ?? [])
    nonNegativeInt(index, "faults.utilityDelayEngines", 0);
  if (faults.utilityDelayMethods?.some((m) => typeof m !== "string" || m === "" || m.includes(","))) {
    throw new MockEngineOptionsError(
      "faults.utilityDelayMethods must be method names (non-empty, no commas)",
      "faults.utilityDelayMethods",
    );
  }
  if (
    (faults.utilityDelayMethods !== undefined || faults.utilityDelayEngines !== undefined) &&
    faults.utilityDelayMs === undefined
  ) {
    throw new MockEngineOptionsError(
      "faults.utilityDelayMethods / utilityDelayEngines need faults.utilityDelayMs",
      "faults.utilityDelayMs",
    );
  }
  const vllmVersion = options.vllmVersion ?? "main";
  if (!isMockVllmVersion(vllmVersion)) {
    throw new MockEngineOptionsError(
      `vllmVersion must be one of ${MOCK_VLLM_VERSIONS.join(", ")}, got ${String(vllmVersion)}`,
      "vllmVersion",
    );
  }
  if (faults.stallAfterSteps !== undefined && faults.stallMs === undefined) {
    throw new MockEngineOptionsError("faults.stallAfterSteps needs faults.stallMs", "faults.stallMs");
  }
  return {
    mode,
    handshakeAddress: options.handshakeAddress,
    inputAddress: options.inputAddress,
    outputAddress: options.outputAddress,
    coordinatorInput: options.coordinatorInput,
    coordinatorOutput: options.coordinatorOutput,
    engineIndices: [...engineIndices],
    stepMs: nonNegativeInt(options.stepMs, "stepMs", 5),
    tokensPerStep,
    echoPrompt: options.echoPrompt ?? false,
    timestamps,
    faults: { ...faults },
    readyResponse: { ...(options.readyResponse ?? {}) },
    vllmVersion,
    logStats: options.logStats === true,
    extraWaiting: nonNegativeInt(options.extraWaiting, "extraWaiting", 0),
    extraWaitingMs:
      options.extraWaitingMs === undefined
        ? undefined
        : nonNegativeInt(options.extraWaitingMs, "extraWaitingMs", 0),
    extraWaitingEngines: options.extraWaitingEngines ? [...options.extraWaitingEngines] : undefined,
    surviveBadRequests: options.surviveBadRequests === true,
    eosTokenId: options.eosTokenId === undefined ? null : nonNegativeInt(options.eosTokenId, "eosTokenId", 0),
  };
}

// One table drives --help, parsing and serialisation.
const FLAGS = {
  mode: { type: "string", help: "handshake | bootstrapped (default handshake)" },
  handshake: { type: "string", help: "handshake mode: the frontend's handshake ROUTER address" },
  input: { type: "string", help: "bootstrapped mode: the frontend's input ROUTER address" },
  output: { type: "string", help: "bootstrapped mode: the frontend's output PULL address" },
  "coordinator-input": { type: "string", help: "bootstrapped mode: the DP coordinator's engine-facing XPUB" },
  "coordinator-output": {
    type: "string",
    help: "bootstrapped mode: the DP coordinator's engine-facing PULL",
  },
  engines: { type: "string", help: "comma-separated engine indices hosted by this process (default 0)" },
  "step-ms": { type: "string", help: "engine step period in ms (default 5; 0 = as fast as possible)" },
  "tokens-per-step": { type: "string", help: "tokens generated per request per step (default 1)" },
  "echo-prompt": { type: "boolean", help: "generate the prompt's tokens back, in order, cycling" },
  timestamps: {
    type: "string",
    help: "monotonic | monotonic-at-send (for latency: one clock for the host) | wall (epoch s at send)",
  },
  "crash-after-steps": { type: "string", help: "fault: SIGKILL the process after N steps of an engine" },
  "dead-sentinel-after-steps": {
    type: "string",
    help: "fault: send ENGINE_CORE_DEAD after N steps, then stop",
  },
  "stall-after-steps": { type: "string", help: "fault: stop stepping for --stall-ms after N steps (once)" },
  "stall-ms": { type: "string", help: "fault: stall duration in ms" },
  "bad-hello": { type: "boolean", help: "fault: HELLO with a wrong status" },
  "no-ready": { type: "boolean", help: "fault: never send READY" },
  "no-registration": { type: "boolean", help: "fault: never send the input-socket registration" },
  "no-coordinator-subscription": {
    type: "boolean",
    help: "fault: never subscribe to the DP coordinator (nor send READY)",
  },
  "garbage-frame-after-steps": { type: "string", help: "fault: push one undecodable frame after N steps" },
  "utility-delay-ms": { type: "string", help: "fault: run each utility call N ms after it arrives" },
  "utility-delay-methods": {
    type: "string",
    help: "fault: comma-separated methods --utility-delay-ms applies to",
  },
  "utility-delay-engines": {
    type: "string",
    help: "fault: comma-separated engines --utility-delay-ms applies to",
  },
  "ready-response": { type: "string", help: "JSON object of EngineCoreReadyResponse overrides (camelCase)" },
  "vllm-version": {
    type: "string",
    help: `the vLLM to play: ${MOCK_VLLM_VERSIONS.join(" | ")} (default main, the pinned revision)`,
  },
  "log-stats": { type: "boolean", help: "send SchedulerStats with every step, as vLLM's log_stats" },
  "extra-waiting": {
    type: "string",
    help: "with --log-stats or a coordinator: report N extra waiting requests (other frontends' load)",
  },
  "extra-waiting-ms": { type: "string", help: "the --extra-waiting load clears after N ms (default never)" },
  "eos-token-id": {
    type: "string",
    help: 'the model\'s EOS id (config.json): what a script ending "eos" emits when the request has none',
  },
  "extra-waiting-engines": { type: "string", help: "comma-separated engines --extra-waiting applies to" },
  "survive-bad-requests": {
    type: "boolean",
    help: "tests: log an undecodable ADD as a `rejected` event and keep reading (vLLM's input thread dies)",
  },
  help: { type: "boolean", help: "print this help" },
} as const;

export function helpText(): string {
  const lines = ["usage: node dist/main.js [flags]", "", "flags:"];
  for (const [name, spec] of Object.entries(FLAGS)) {
    const arg = spec.type === "string" ? " <value>" : "";
    lines.push(`${`  --${name}${arg}`.padEnd(38)} ${spec.help}`);
  }
  lines.push(
    "",
    "env: MOCK_ENGINE_LOG_STEPS=1 logs a `step` event per engine step.",
    "The process logs one JSON event per line on stdout and exits on SIGTERM/SIGINT or when its parent dies.",
  );
  return lines.join("\n");
}

function intFlag(values: Record<string, unknown>, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== "string" || raw.trim() === "" || !Number.isInteger(n)) {
    throw new MockEngineOptionsError(`--${name} needs an integer, got ${String(raw)}`, name);
  }
  return n;
}

function intList(raw: string, name: string): number[] {
  return raw.split(",").map((s) => {
    const n = Number(s);
    if (s.trim() === "" || !Number.isInteger(n)) {
      throw new MockEngineOptionsError(`--${name} needs comma-separated integers, got ${raw}`, name);
    }
    return n;
  });
}

/** Parses CLI flags; returns "help" when --help was given. */
export function parseArgv(argv: readonly string[]): MockEngineOptions | "help" {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(Object.entries(FLAGS).map(([k, v]) => [k, { type: v.type }])),
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new MockEngineOptionsError(`${(error as Error).message} (see --help)`, "argv");
  }
  const v = parsed.values as Record<string, unknown>;
  if (v.help) return "help";
  const options: MockEngineOptions = {};
  if (v.mode !== undefined) options.mode = v.mode as MockEngineOptions["mode"] & string;
  if (v.handshake !== undefined) options.handshakeAddress = String(v.handshake);
  if (v.input !== undefined) options.inputAddress = String(v.input);
  if (v.output !== undefined) options.outputAddress = String(v.output);
  if (v["coordinator-input"] !== undefined) options.coordinatorInput = String(v["coordinator-input"]);
  if (v["coordinator-output"] !== undefined) options.coordinatorOutput = String(v["coordinator-output"]);
  if (v.engines !== undefined) options.engineIndices = intList(String(v.engines), "engines");
  const stepMs = intFlag(v, "step-ms");
  if (stepMs !== undefined) options.stepMs = stepMs;
  const tokensPerStep = intFlag(v, "tokens-per-step");
  if (tokensPerStep !== undefined) options.tokensPerStep = tokensPerStep;
  if (v["echo-prompt"]) options.echoPrompt = true;
  if (v.timestamps !== undefined) options.timestamps = v.timestamps as TimestampMode;
  const faults: MockEngineFaults = {};
  const intFaults = [
    ["crash-after-steps", "crashAfterSteps"],
    ["dead-sentinel-after-steps", "deadSentinelAfterSteps"],
    ["stall-after-steps", "stallAfterSteps"],
    ["stall-ms", "stallMs"],
    ["garbage-frame-after-steps", "garbageFrameAfterSteps"],
    ["utility-delay-ms", "utilityDelayMs"],
  ] as const;
  for (const [flag, key] of intFaults) {
    const n = intFlag(v, flag);
    if (n !== undefined) faults[key] = n;
  }
  if (v["utility-delay-methods"] !== undefined) {
    faults.utilityDelayMethods = String(v["utility-delay-methods"]).split(",");
  }
  if (v["utility-delay-engines"] !== undefined) {
    faults.utilityDelayEngines = intList(String(v["utility-delay-engines"]), "utility-delay-engines");
  }
  if (v["bad-hello"]) faults.badHello = true;
  if (v["no-ready"]) faults.noReady = true;
  if (v["no-registration"]) faults.noRegistration = true;
  if (v["no-coordinator-subscription"]) faults.noCoordinatorSubscription = true;
  if (Object.keys(faults).length > 0) options.faults = faults;
  if (v["survive-bad-requests"]) options.surviveBadRequests = true;
  if (v["vllm-version"] !== undefined) options.vllmVersion = String(v["vllm-version"]) as MockVllmVersion;
  if (v["log-stats"]) options.logStats = true;
  if (v["extra-waiting"] !== undefined) options.extraWaiting = Number(v["extra-waiting"]);
  if (v["extra-waiting-ms"] !== undefined) options.extraWaitingMs = Number(v["extra-waiting-ms"]);
  if (v["eos-token-id"] !== undefined) options.eosTokenId = Number(v["eos-token-id"]);
  if (v["extra-waiting-engines"] !== undefined) {
    options.extraWaitingEngines = intList(String(v["extra-waiting-engines"]), "extra-waiting-engines");
  }
  if (v["ready-response"] !== undefined) {
    let overrides: unknown;
    try {
      overrides = JSON.parse(String(v["ready-response"]));
    } catch (error) {
      throw new MockEngineOptionsError(
        `--ready-response is not JSON: ${(error as Error).message}`,
        "ready-response",
      );
    }
    if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides)) {
      throw new MockEngineOptionsError("--ready-response must be a JSON object", "ready-response");
    }
    options.readyResponse = overrides as ReadyResponseOverrides;
  }
  return options;
}

/** The CLI flags equivalent to `options` (env is not a flag: the launcher passes it to the child's environment). */
export function toArgv(options: MockEngineOptions): string[] {
  const argv: string[] = [];
  const push = (flag: string, value: string | number | undefined) => {
    if (value !== undefined) argv.push(`--${flag}`, String(value));
  };
  push("mode", options.mode);
  push("handshake", options.handshakeAddress);
  push("input", options.inputAddress);
  push("output", options.outputAddress);
  push("coordinator-input", options.coordinatorInput);
  push("coordinator-output", options.coordinatorOutput);
  if (options.engineIndices) push("engines", options.engineIndices.join(","));
  push("step-ms", options.stepMs);
  push("tokens-per-step", options.tokensPerStep);
  if (options.echoPrompt) argv.push("--echo-prompt");
  push("timestamps", options.timestamps);
  const f = options.faults ?? {};
  push("crash-after-steps", f.crashAfterSteps);
  push("dead-sentinel-after-steps", f.deadSentinelAfterSteps);
  push("stall-after-steps", f.stallAfterSteps);
  push("stall-ms", f.stallMs);
  push("garbage-frame-after-steps", f.garbageFrameAfterSteps);
  push("utility-delay-ms", f.utilityDelayMs);
  push("utility-delay-methods", f.utilityDelayMethods?.join(","));
  push("utility-delay-engines", f.utilityDelayEngines?.join(","));
  if (f.badHello) argv.push("--bad-hello");
  if (f.noReady) argv.push("--no-ready");
  if (f.noRegistration) argv.push("--no-registration");
  if (f.noCoordinatorSubscription) argv.push("--no-coordinator-subscription");
  if (options.readyResponse) push("ready-response", JSON.stringify(options.readyResponse));
  if (options.surviveBadRequests) argv.push("--survive-bad-requests");
  push("vllm-version", options.vllmVersion);
  if (options.logStats) argv.push("--log-stats");
  push("extra-waiting", options.extraWaiting);
  push("extra-waiting-ms", options.extraWaitingMs);
  push("extra-waiting-engines", options.extraWaitingEngines?.join(","));
  push("eos-token-id", options.eosTokenId);
  return argv;
}
