// The one configuration schema: what a user may set (`EngineCoreClientConfig`), every default, every
// validation rule, and the resolved form that the runtime and the transport consume (`ResolvedConfig`).
// Shape and defaults of the connection settings follow vLLM's Rust `EngineCoreClientConfig`
// (rust/src/engine-core-client/src/client.rs, `new_single`: advertised host 127.0.0.1, one engine, 30 s
// ready timeout, client index 0). The liveness tuning is ours: vLLM's engine-core sockets
// (vllm/utils/network_utils.py `make_zmq_socket`, the Rust `transport.rs`) set no ZMTP heartbeat; vLLM
// watches the engine processes it launched instead (vllm/v1/engine/utils.py `monitor_engine_liveness`),
// which a frontend that only talks to the engines over sockets cannot do.
// `resolveConfig` runs once, on the calling thread; nothing downstream validates again.
import { InvalidConfigError } from "./errors.js";

/**
 * ZMTP heartbeats on the engine-facing ROUTER sockets (the input socket, and the handshake socket while
 * starting). libzmq answers a PING on the engine's own I/O thread, so a busy engine (or one holding the
 * Python GIL) is not reported; a frozen process or a silent network partition is: after a PING, a connection
 * with no traffic for `timeoutMs` is dropped, and the engine is dead about `intervalMs + timeoutMs` (plus
 * `vanishGraceMs`) after it froze.
 */
export interface HeartbeatConfig {
  /** Interval between PINGs (integer ms). Default 1000; 0 turns heartbeats off. */
  intervalMs?: number;
  /** How long a connection may stay silent after a PING before it is dropped (integer ms). Default 5000. */
  timeoutMs?: number;
}

/** How the transport tells which engine died and when; the same in both transport modes. */
export interface TransportTuning {
  /** See `HeartbeatConfig`. Default `{ intervalMs: 1000, timeoutMs: 5000 }`. */
  heartbeat?: HeartbeatConfig;
  /**
   * On an output socket several engines share (an explicit `localOutputAddress`, the bootstrapped mode, or
   * more than 128 engines), an ENGINE_CORE_DEAD sentinel names no engine: it is attributed to the engine whose
   * input connection drops within this many ms of it, else every live engine on that socket is reported dead.
   * Default 5000 (vLLM's engine waits up to 5 s for its output thread before it exits: `_send_engine_dead` in
   * vllm/v1/engine/core.py).
   */
  sentinelAttributionWindowMs?: number;
  /**
   * After an engine's input connection drops, wait this long before reporting it dead, so that the outputs it
   * pushed just before (on another socket) reach their streams first. Default 50 ms.
   */
  vanishGraceMs?: number;
}

export interface HandshakeOwnerTransport extends TransportTuning {
  mode: "handshake-owner";
  /** Address of the handshake ROUTER this client binds, e.g. `tcp://127.0.0.1:29550`. */
  handshakeAddress: string;
  /** Host put into `tcp://<host>:0` for the input/output binds. Default `127.0.0.1`. */
  advertisedHost?: string;
  /** Engines expected to say HELLO. Default 1. */
  engineCount?: number;
  /** Per-receive bound on each handshake stage. Default 30 000 ms. */
  readyTimeoutMs?: number;
  /** Explicit input ROUTER bind address (default `tcp://<advertisedHost>:0`). */
  localInputAddress?: string;
  /** Explicit output PULL bind address, shared by every engine (default: one `tcp://<advertisedHost>:0` per engine). */
  localOutputAddress?: string;
}

export interface BootstrappedTransport extends TransportTuning {
  mode: "bootstrapped";
  /** Input ROUTER address chosen by the supervisor (bound here). */
  inputAddress: string;
  /** Output PULL address chosen by the supervisor (bound here). */
  outputAddress: string;
  /** First engine index expected to register. Default 0. */
  engineStartIndex?: number;
  /** Engines expected to register. Default 1. */
  engineCount?: number;
  /** Bound on waiting for each registration. Default 30 000 ms. */
  readyTimeoutMs?: number;
}

export type TransportConfig = HandshakeOwnerTransport | BootstrappedTransport;

/** Data-parallel wave coordinator (spec §8.4): in-process with handshake-owner, external with bootstrapped. */
export type CoordinatorConfig = { mode: "inproc" } | { mode: "external"; address: string };

/**
 * vLLM's `StructuredOutputsBackend` (vllm/config/structured_outputs.py): which grammar library the engine
 * uses for structured outputs. `auto` picks one per request as vLLM's frontend does.
 */
export type StructuredOutputsBackend = "auto" | "xgrammar" | "guidance" | "outlines" | "lm-format-enforcer";

export const STRUCTURED_OUTPUTS_BACKENDS: readonly StructuredOutputsBackend[] = [
  "auto",
  "xgrammar",
  "guidance",
  "outlines",
  "lm-format-enforcer",
];

/** vLLM's `StructuredOutputsConfig` (`--structured-outputs-config.backend`), the frontend's part of it. */
export interface StructuredOutputsConfig {
  /** Default `auto`. */
  backend?: StructuredOutputsBackend;
}

export interface EngineCoreClientConfig {
  transport: TransportConfig;
  /** Default: none (null, as in the resolved form, also means none). */
  coordinator?: CoordinatorConfig | null;
  /** Label for metrics and diagnostics. Default "". */
  modelName?: string;
  /** This frontend's index in the engines' `addresses.outputs`. Default 0. */
  clientIndex?: number;
  /**
   * The structured-outputs backend the request's `_backend` names, chosen here as vLLM's frontend does
   * (the engines must have been started with the same `--structured-outputs-config.backend`, default auto).
   */
  structuredOutputs?: StructuredOutputsConfig;
}

export const DEFAULT_ADVERTISED_HOST = "127.0.0.1";
export const DEFAULT_ENGINE_COUNT = 1;
export const DEFAULT_ENGINE_START_INDEX = 0;
export const DEFAULT_READY_TIMEOUT_MS = 30_000;
export const DEFAULT_CLIENT_INDEX = 0;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 5000;
export const DEFAULT_SENTINEL_ATTRIBUTION_WINDOW_MS = 5000;
export const DEFAULT_VANISH_GRACE_MS = 50;

// ---- the resolved form: every default filled in, validated, frozen ---------------------------------

export interface ResolvedHeartbeat {
  /** 0: heartbeats are off (then `timeoutMs` is not used). */
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

export interface ResolvedTransportTuning {
  readonly heartbeat: ResolvedHeartbeat;
  readonly sentinelAttributionWindowMs: number;
  readonly vanishGraceMs: number;
}

export interface ResolvedHandshakeOwnerTransport extends ResolvedTransportTuning {
  readonly mode: "handshake-owner";
  readonly handshakeAddress: string;
  readonly advertisedHost: string;
  readonly engineCount: number;
  readonly readyTimeoutMs: number;
  readonly localInputAddress?: string;
  readonly localOutputAddress?: string;
}

export interface ResolvedBootstrappedTransport extends ResolvedTransportTuning {
  readonly mode: "bootstrapped";
  readonly inputAddress: string;
  readonly outputAddress: string;
  readonly engineStartIndex: number;
  readonly engineCount: number;
  readonly readyTimeoutMs: number;
}

export type ResolvedTransportConfig = ResolvedHandshakeOwnerTransport | ResolvedBootstrappedTransport;

/** What `resolveConfig` returns: plain data (structured-cloneable), deeply frozen. */
export interface ResolvedConfig {
  readonly transport: ResolvedTransportConfig;
  readonly coordinator: Readonly<CoordinatorConfig> | null;
  readonly modelName: string;
  readonly clientIndex: number;
  readonly structuredOutputs: { readonly backend: StructuredOutputsBackend };
}

/** Largest delay a Node timer and a ZeroMQ int option take. */
const MAX_MS = 2 ** 31 - 1;
/** Engine identities are 2 bytes (vLLM's EngineCoreProc routing identity), so indices are 0…65535. */
const MAX_ENGINES = 65_536;

const ADDRESS = /^(tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]+):(\d{1,5}|\*)|ipc:\/\/\S+)$/;

function fail(field: string, detail: string): never {
  throw new InvalidConfigError(field, detail);
}

function checkAddress(field: string, value: unknown): string {
  if (typeof value !== "string" || !ADDRESS.test(value)) {
    fail(
      field,
      `expected a ZeroMQ endpoint like "tcp://127.0.0.1:29550" or "ipc:///tmp/engine.sock", got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    fail(field, `expected an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function checkTimeout(field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_MS) {
    fail(field, `expected a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function checkDelay(field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_MS) {
    fail(field, `expected a number of milliseconds in [0, ${MAX_MS}], got ${String(value)}`);
  }
  return value;
}

function resolveTuning(t: TransportTuning): ResolvedTransportTuning {
  const hb = t.heartbeat;
  if (hb !== undefined && (hb === null || typeof hb !== "object")) {
    fail("transport.heartbeat", `expected { intervalMs?, timeoutMs? }, got ${String(hb)}`);
  }
  return {
    // libzmq takes both as int milliseconds (ZMQ_HEARTBEAT_IVL, ZMQ_HEARTBEAT_TIMEOUT).
    heartbeat: {
      intervalMs: checkInt(
        "transport.heartbeat.intervalMs",
        hb?.intervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
        0,
        MAX_MS,
      ),
      timeoutMs: checkInt(
        "transport.heartbeat.timeoutMs",
        hb?.timeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
        1,
        MAX_MS,
      ),
    },
    sentinelAttributionWindowMs: checkDelay(
      "transport.sentinelAttributionWindowMs",
      t.sentinelAttributionWindowMs ?? DEFAULT_SENTINEL_ATTRIBUTION_WINDOW_MS,
    ),
    vanishGraceMs: checkDelay("transport.vanishGraceMs", t.vanishGraceMs ?? DEFAULT_VANISH_GRACE_MS),
  };
}

function resolveTransport(t: TransportConfig): ResolvedTransportConfig {
  if (t === null || typeof t !== "object") {
    fail("transport", 'expected { mode: "handshake-owner" | "bootstrapped", ... }');
  }
  if (t.mode === "handshake-owner") {
    const advertisedHost = t.advertisedHost ?? DEFAULT_ADVERTISED_HOST;
    if (typeof advertisedHost !== "string" || advertisedHost.length === 0 || /[\s/]/.test(advertisedHost)) {
      fail("transport.advertisedHost", `expected a host name or IP, got ${advertisedHost}`);
    }
    return {
      mode: "handshake-owner",
      handshakeAddress: checkAddress("transport.handshakeAddress", t.handshakeAddress),
      advertisedHost,
      engineCount: checkInt("transport.engineCount", t.engineCount ?? DEFAULT_ENGINE_COUNT, 1, MAX_ENGINES),
      readyTimeoutMs: checkTimeout("transport.readyTimeoutMs", t.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS),
      ...(t.localInputAddress === undefined
        ? {}
        : { localInputAddress: checkAddress("transport.localInputAddress", t.localInputAddress) }),
      ...(t.localOutputAddress === undefined
        ? {}
        : { localOutputAddress: checkAddress("transport.localOutputAddress", t.localOutputAddress) }),
      ...resolveTuning(t),
    };
  }
  if (t.mode === "bootstrapped") {
    const engineStartIndex = checkInt(
      "transport.engineStartIndex",
      t.engineStartIndex ?? DEFAULT_ENGINE_START_INDEX,
      0,
      MAX_ENGINES - 1,
    );
    const engineCount = checkInt(
      "transport.engineCount",
      t.engineCount ?? DEFAULT_ENGINE_COUNT,
      1,
      MAX_ENGINES,
    );
    if (engineStartIndex + engineCount > MAX_ENGINES) {
      fail(
        "transport.engineCount",
        `engine indices ${engineStartIndex}..${engineStartIndex + engineCount - 1} do not fit the 2-byte engine identity`,
      );
    }
    return {
      mode: "bootstrapped",
      inputAddress: checkAddress("transport.inputAddress", t.inputAddress),
      outputAddress: checkAddress("transport.outputAddress", t.outputAddress),
      engineStartIndex,
      engineCount,
      readyTimeoutMs: checkTimeout("transport.readyTimeoutMs", t.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS),
      ...resolveTuning(t),
    };
  }
  fail(
    "transport.mode",
    `expected "handshake-owner" or "bootstrapped", got ${JSON.stringify((t as { mode?: unknown }).mode)}`,
  );
}

function resolveCoordinator(
  c: CoordinatorConfig | null | undefined,
  transport: ResolvedTransportConfig,
): CoordinatorConfig | null {
  if (c === undefined || c === null) return null;
  if (typeof c !== "object") fail("coordinator", `expected an object, got ${String(c)}`);
  if (c.mode === "inproc") {
    if (transport.mode !== "handshake-owner") {
      fail(
        "coordinator",
        "an in-process coordinator needs the handshake-owner transport (engines learn its addresses from INIT)",
      );
    }
    return { mode: "inproc" };
  }
  if (c.mode === "external") {
    if (transport.mode !== "bootstrapped") {
      fail(
        "coordinator",
        "an external coordinator is only supported with the bootstrapped transport, as in vLLM's Rust client",
      );
    }
    return { mode: "external", address: checkAddress("coordinator.address", c.address) };
  }
  fail("coordinator.mode", 'expected "inproc" or "external"');
}

/** Validates `structuredOutputs` and fills its default (backend `auto`); `InvalidConfigError` otherwise. */
export function resolveStructuredOutputsBackend(
  c: StructuredOutputsConfig | undefined,
): StructuredOutputsBackend {
  if (c === undefined || c === null) return "auto";
  if (typeof c !== "object") fail("structuredOutputs", `expected { backend? }, got ${String(c)}`);
  const backend = c.backend ?? "auto";
  if (!STRUCTURED_OUTPUTS_BACKENDS.includes(backend)) {
    fail(
      "structuredOutputs.backend",
      `expected one of ${STRUCTURED_OUTPUTS_BACKENDS.map((b) => JSON.stringify(b)).join(", ")}, got ${JSON.stringify(backend)}`,
    );
  }
  return backend;
}

/** The objects `resolveConfig` returned (frozen), so that a resolved config is never validated again. */
const resolvedConfigs = new WeakSet<object>();

/**
 * Validates `config` and returns it resolved: every default filled in, deeply frozen. Throws
 * `InvalidConfigError` naming the first invalid setting. Passing a resolved config returns it unchanged.
 */
export function resolveConfig(config: EngineCoreClientConfig | ResolvedConfig): ResolvedConfig {
  if (isResolvedConfig(config)) return config;
  if (config === null || typeof config !== "object") {
    fail("config", "expected an object with a `transport` field");
  }
  const transport = resolveTransport(config.transport);
  const clientIndex = checkInt("clientIndex", config.clientIndex ?? DEFAULT_CLIENT_INDEX, 0, MAX_MS);
  if (transport.mode === "handshake-owner" && clientIndex !== 0) {
    // The engine pushes each output to INIT's outputs[client_index]; this client's INIT lists only itself.
    fail(
      "clientIndex",
      `must be 0 with the handshake-owner transport (got ${clientIndex}): the engine sends outputs to ` +
        "outputs[clientIndex] of the INIT this client sends, which lists only this client. Several frontends " +
        "sharing engines use the bootstrapped transport, each with its own clientIndex",
    );
  }
  const modelName = config.modelName ?? "";
  if (typeof modelName !== "string") fail("modelName", `expected a string, got ${typeof modelName}`);
  const resolved: ResolvedConfig = {
    transport,
    coordinator: resolveCoordinator(config.coordinator, transport),
    modelName,
    clientIndex,
    structuredOutputs: { backend: resolveStructuredOutputsBackend(config.structuredOutputs) },
  };
  deepFreeze(resolved);
  resolvedConfigs.add(resolved);
  return resolved;
}

/** True for an object `resolveConfig` returned (in this realm). */
export function isResolvedConfig(value: unknown): value is ResolvedConfig {
  return typeof value === "object" && value !== null && resolvedConfigs.has(value);
}

function deepFreeze(value: object): void {
  for (const inner of Object.values(value)) {
    if (typeof inner === "object" && inner !== null) deepFreeze(inner);
  }
  Object.freeze(value);
}
