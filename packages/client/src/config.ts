// Client configuration: the shape and defaults of vLLM's Rust `EngineCoreClientConfig`
// (`new_single`: advertised host 127.0.0.1, one engine, 30 s ready timeout, client index 0),
// validated on the calling thread before anything reaches the runtime.
import { InvalidConfigError } from "./errors.js";

export interface HandshakeOwnerTransport {
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
  /** Explicit output PULL bind address (default `tcp://<advertisedHost>:0`). */
  localOutputAddress?: string;
}

export interface BootstrappedTransport {
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

export type CoordinatorConfig = { mode: "inproc" } | { mode: "external"; address: string };

export interface EngineCoreClientConfig {
  transport: HandshakeOwnerTransport | BootstrappedTransport;
  coordinator?: CoordinatorConfig;
  /** Label for metrics and diagnostics. Default "". */
  modelName?: string;
  /** This frontend's index in the engines' `addresses.outputs`. Default 0. */
  clientIndex?: number;
}

export const DEFAULT_ADVERTISED_HOST = "127.0.0.1";
export const DEFAULT_ENGINE_COUNT = 1;
export const DEFAULT_READY_TIMEOUT_MS = 30_000;
export const DEFAULT_CLIENT_INDEX = 0;

const ADDRESS = /^(tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]+):(\d{1,5}|\*)|ipc:\/\/\S+)$/;

function checkAddress(field: string, value: unknown): string {
  if (typeof value !== "string" || !ADDRESS.test(value)) {
    throw new InvalidConfigError(
      field,
      `expected a ZeroMQ endpoint like "tcp://127.0.0.1:29550" or "ipc:///tmp/engine.sock", got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidConfigError(field, `expected an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function checkTimeout(field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 2 ** 31 - 1) {
    throw new InvalidConfigError(field, `expected a positive number of milliseconds, got ${String(value)}`);
  }
  return value;
}

/** Validates `config` and returns a copy with every default filled in. */
export function resolveConfig(config: EngineCoreClientConfig): Required<
  Omit<EngineCoreClientConfig, "coordinator">
> & {
  coordinator?: CoordinatorConfig;
} {
  if (config === null || typeof config !== "object") {
    throw new InvalidConfigError("config", "expected an object with a `transport` field");
  }
  const t = config.transport;
  if (t === null || typeof t !== "object") {
    throw new InvalidConfigError("transport", 'expected { mode: "handshake-owner" | "bootstrapped", ... }');
  }
  let transport: HandshakeOwnerTransport | BootstrappedTransport;
  if (t.mode === "handshake-owner") {
    const advertisedHost = t.advertisedHost ?? DEFAULT_ADVERTISED_HOST;
    if (typeof advertisedHost !== "string" || advertisedHost.length === 0 || /[\s/]/.test(advertisedHost)) {
      throw new InvalidConfigError(
        "transport.advertisedHost",
        `expected a host name or IP, got ${advertisedHost}`,
      );
    }
    transport = {
      mode: "handshake-owner",
      handshakeAddress: checkAddress("transport.handshakeAddress", t.handshakeAddress),
      advertisedHost,
      engineCount: checkInt("transport.engineCount", t.engineCount ?? DEFAULT_ENGINE_COUNT, 1, 65_536),
      readyTimeoutMs: checkTimeout("transport.readyTimeoutMs", t.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS),
    };
    if (t.localInputAddress !== undefined) {
      transport.localInputAddress = checkAddress("transport.localInputAddress", t.localInputAddress);
    }
    if (t.localOutputAddress !== undefined) {
      transport.localOutputAddress = checkAddress("transport.localOutputAddress", t.localOutputAddress);
    }
  } else if (t.mode === "bootstrapped") {
    const engineStartIndex = checkInt("transport.engineStartIndex", t.engineStartIndex ?? 0, 0, 65_535);
    const engineCount = checkInt("transport.engineCount", t.engineCount ?? DEFAULT_ENGINE_COUNT, 1, 65_536);
    if (engineStartIndex + engineCount > 65_536) {
      throw new InvalidConfigError(
        "transport.engineCount",
        `engine indices ${engineStartIndex}..${engineStartIndex + engineCount - 1} do not fit the 2-byte engine identity`,
      );
    }
    transport = {
      mode: "bootstrapped",
      inputAddress: checkAddress("transport.inputAddress", t.inputAddress),
      outputAddress: checkAddress("transport.outputAddress", t.outputAddress),
      engineStartIndex,
      engineCount,
      readyTimeoutMs: checkTimeout("transport.readyTimeoutMs", t.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS),
    };
  } else {
    throw new InvalidConfigError(
      "transport.mode",
      `expected "handshake-owner" or "bootstrapped", got ${JSON.stringify((t as { mode?: unknown }).mode)}`,
    );
  }

  const resolved: ReturnType<typeof resolveConfig> = {
    transport,
    modelName: config.modelName ?? "",
    clientIndex: checkInt("clientIndex", config.clientIndex ?? DEFAULT_CLIENT_INDEX, 0, 2 ** 31 - 1),
  };
  if (transport.mode === "handshake-owner" && resolved.clientIndex !== 0) {
    // The engine pushes each output to INIT's outputs[client_index]; this client's INIT lists only itself.
    throw new InvalidConfigError(
      "clientIndex",
      `must be 0 with the handshake-owner transport (got ${resolved.clientIndex}): the engine sends outputs to ` +
        "outputs[clientIndex] of the INIT this client sends, which lists only this client. Several frontends " +
        "sharing engines use the bootstrapped transport, each with its own clientIndex",
    );
  }
  if (typeof resolved.modelName !== "string") {
    throw new InvalidConfigError("modelName", `expected a string, got ${typeof resolved.modelName}`);
  }
  const c = config.coordinator;
  if (c !== undefined) {
    if (c.mode === "inproc") {
      if (transport.mode !== "handshake-owner") {
        throw new InvalidConfigError(
          "coordinator",
          "an in-process coordinator needs the handshake-owner transport (engines learn its addresses from INIT)",
        );
      }
      resolved.coordinator = { mode: "inproc" };
    } else if (c.mode === "external") {
      if (transport.mode !== "bootstrapped") {
        throw new InvalidConfigError(
          "coordinator",
          "an external coordinator is only supported with the bootstrapped transport, as in vLLM's Rust client",
        );
      }
      resolved.coordinator = { mode: "external", address: checkAddress("coordinator.address", c.address) };
    } else {
      throw new InvalidConfigError("coordinator.mode", 'expected "inproc" or "external"');
    }
  }
  return resolved;
}
