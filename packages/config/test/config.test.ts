import { describe, expect, it } from "vitest";
import {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_READY_TIMEOUT_MS,
  DEFAULT_SENTINEL_ATTRIBUTION_WINDOW_MS,
  DEFAULT_VANISH_GRACE_MS,
  type EngineCoreClientConfig,
  InvalidConfigError,
  isResolvedConfig,
  resolveConfig,
} from "../src/index.ts";

const OWNER = { mode: "handshake-owner", handshakeAddress: "tcp://127.0.0.1:29550" } as const;
const BOOT = {
  mode: "bootstrapped",
  inputAddress: "tcp://127.0.0.1:29551",
  outputAddress: "ipc:///tmp/vec-out.sock",
} as const;

const DEFAULT_TUNING = {
  heartbeat: { intervalMs: 1000, timeoutMs: 5000 },
  sentinelAttributionWindowMs: 5000,
  vanishGraceMs: 50,
};

/** Runs resolveConfig on something that may not even type-check, and returns what it threw. */
function rejection(config: unknown): InvalidConfigError {
  try {
    resolveConfig(config as EngineCoreClientConfig);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidConfigError);
    return error as InvalidConfigError;
  }
  throw new Error(`resolveConfig accepted ${JSON.stringify(config)}`);
}

describe("defaults", () => {
  it("fills every default of a handshake-owner config (vLLM's Rust new_single)", () => {
    expect(resolveConfig({ transport: OWNER })).toEqual({
      transport: {
        ...OWNER,
        advertisedHost: "127.0.0.1",
        engineCount: 1,
        readyTimeoutMs: 30_000,
        ...DEFAULT_TUNING,
      },
      coordinator: null,
      modelName: "",
      clientIndex: 0,
      structuredOutputs: { backend: "auto" },
    });
  });

  it("fills every default of a bootstrapped config", () => {
    expect(resolveConfig({ transport: BOOT })).toEqual({
      transport: { ...BOOT, engineStartIndex: 0, engineCount: 1, readyTimeoutMs: 30_000, ...DEFAULT_TUNING },
      coordinator: null,
      modelName: "",
      clientIndex: 0,
      structuredOutputs: { backend: "auto" },
    });
  });

  it("exports the defaults it applies", () => {
    expect([
      DEFAULT_READY_TIMEOUT_MS,
      DEFAULT_HEARTBEAT_INTERVAL_MS,
      DEFAULT_HEARTBEAT_TIMEOUT_MS,
      DEFAULT_SENTINEL_ATTRIBUTION_WINDOW_MS,
      DEFAULT_VANISH_GRACE_MS,
    ]).toEqual([30_000, 1000, 5000, 5000, 50]);
  });

  it("keeps what is set, and leaves the optional binds out when unset", () => {
    const resolved = resolveConfig({
      transport: {
        ...OWNER,
        advertisedHost: "10.0.0.2",
        engineCount: 4,
        readyTimeoutMs: 0.5,
        localInputAddress: "ipc:///tmp/in.sock",
        localOutputAddress: "tcp://[::1]:0",
      },
      coordinator: { mode: "inproc" },
      modelName: "m",
    });
    expect(resolved.transport).toMatchObject({
      advertisedHost: "10.0.0.2",
      engineCount: 4,
      readyTimeoutMs: 0.5,
      localInputAddress: "ipc:///tmp/in.sock",
      localOutputAddress: "tcp://[::1]:0",
    });
    expect(resolved.coordinator).toEqual({ mode: "inproc" });
    expect(resolved.modelName).toBe("m");
    expect(
      resolveConfig({ transport: OWNER, structuredOutputs: { backend: "guidance" } }).structuredOutputs,
    ).toEqual({ backend: "guidance" });
    expect("localInputAddress" in resolveConfig({ transport: OWNER }).transport).toBe(false);
    expect(resolveConfig({ transport: OWNER, coordinator: null }).coordinator).toBeNull();
    expect(
      resolveConfig({
        transport: { ...BOOT, engineStartIndex: 65_534, engineCount: 2 },
        clientIndex: 3,
        coordinator: { mode: "external", address: "tcp://10.0.0.1:5000" },
      }),
    ).toMatchObject({
      transport: { engineStartIndex: 65_534, engineCount: 2 },
      clientIndex: 3,
      coordinator: { mode: "external", address: "tcp://10.0.0.1:5000" },
    });
  });
});

describe("the resolved form", () => {
  it("is deeply frozen, plain data, and resolved only once", () => {
    const input: EngineCoreClientConfig = { transport: { ...OWNER, heartbeat: { intervalMs: 10 } } };
    const resolved = resolveConfig(input);
    expect(Object.isFrozen(resolved)).toBe(true);
    expect(Object.isFrozen(resolved.transport)).toBe(true);
    expect(Object.isFrozen(resolved.transport.heartbeat)).toBe(true);
    expect(isResolvedConfig(resolved)).toBe(true);
    expect(isResolvedConfig(input)).toBe(false);
    expect(resolveConfig(resolved)).toBe(resolved); // not validated again
    // Crosses threads by structured clone; a clone is plain data again and resolves to the same values.
    const clone = structuredClone(resolved);
    expect(isResolvedConfig(clone)).toBe(false);
    expect(resolveConfig(clone)).toEqual(resolved);
    // Changing the input afterwards changes nothing.
    (input.transport as { engineCount?: number }).engineCount = 9;
    expect(resolved.transport.engineCount).toBe(1);
  });
});

describe("transport tuning", () => {
  it("passes heartbeat, sentinel window and vanish grace through", () => {
    for (const transport of [OWNER, BOOT]) {
      const resolved = resolveConfig({
        transport: {
          ...transport,
          heartbeat: { intervalMs: 100, timeoutMs: 400 },
          sentinelAttributionWindowMs: 250,
          vanishGraceMs: 0,
        },
      });
      expect(resolved.transport).toMatchObject({
        heartbeat: { intervalMs: 100, timeoutMs: 400 },
        sentinelAttributionWindowMs: 250,
        vanishGraceMs: 0,
      });
    }
  });

  it("defaults each heartbeat field on its own; intervalMs 0 turns heartbeats off", () => {
    expect(
      resolveConfig({ transport: { ...OWNER, heartbeat: { timeoutMs: 800 } } }).transport.heartbeat,
    ).toEqual({ intervalMs: 1000, timeoutMs: 800 });
    expect(
      resolveConfig({ transport: { ...OWNER, heartbeat: { intervalMs: 0 } } }).transport.heartbeat,
    ).toEqual({
      intervalMs: 0,
      timeoutMs: 5000,
    });
    expect(resolveConfig({ transport: { ...BOOT, heartbeat: {} } }).transport.heartbeat).toEqual({
      intervalMs: 1000,
      timeoutMs: 5000,
    });
  });
});

describe("every validation rule", () => {
  const MAX = 2 ** 31 - 1;
  const cases: [string, unknown, string, RegExp][] = [
    ["config not an object", null, "config", /expected an object with a `transport` field/],
    ["no transport", {}, "transport", /expected \{ mode/],
    ["unknown mode", { transport: { mode: "x" } }, "transport.mode", /got "x"/],
    [
      "handshake address not an endpoint",
      { transport: { ...OWNER, handshakeAddress: "localhost:1" } },
      "transport.handshakeAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "handshake address missing",
      { transport: { mode: "handshake-owner" } },
      "transport.handshakeAddress",
      /got undefined/,
    ],
    [
      "handshake address of another scheme",
      { transport: { ...OWNER, handshakeAddress: "http://x" } },
      "transport.handshakeAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "advertised host with a slash",
      { transport: { ...OWNER, advertisedHost: "a/b" } },
      "transport.advertisedHost",
      /host name or IP/,
    ],
    [
      "empty advertised host",
      { transport: { ...OWNER, advertisedHost: "" } },
      "transport.advertisedHost",
      /host/,
    ],
    [
      "engineCount 0",
      { transport: { ...OWNER, engineCount: 0 } },
      "transport.engineCount",
      /\[1, 65536\], got 0/,
    ],
    [
      "engineCount beyond the 2-byte identity",
      { transport: { ...OWNER, engineCount: 65_537 } },
      "transport.engineCount",
      /got 65537/,
    ],
    ["engineCount fractional", { transport: { ...BOOT, engineCount: 1.5 } }, "transport.engineCount", /1\.5/],
    [
      "readyTimeoutMs 0",
      { transport: { ...OWNER, readyTimeoutMs: 0 } },
      "transport.readyTimeoutMs",
      /positive/,
    ],
    [
      "readyTimeoutMs infinite",
      { transport: { ...BOOT, readyTimeoutMs: Number.POSITIVE_INFINITY } },
      "transport.readyTimeoutMs",
      /positive/,
    ],
    [
      "readyTimeoutMs above a timer's range",
      { transport: { ...OWNER, readyTimeoutMs: MAX + 1 } },
      "transport.readyTimeoutMs",
      /positive/,
    ],
    [
      "local input bind not an endpoint",
      { transport: { ...OWNER, localInputAddress: "nope" } },
      "transport.localInputAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "local output bind not an endpoint",
      { transport: { ...OWNER, localOutputAddress: "tcp://host" } },
      "transport.localOutputAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "bootstrapped input address missing",
      { transport: { mode: "bootstrapped", outputAddress: BOOT.outputAddress } },
      "transport.inputAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "bootstrapped output address not an endpoint",
      { transport: { ...BOOT, outputAddress: "x" } },
      "transport.outputAddress",
      /ZeroMQ endpoint/,
    ],
    [
      "engineStartIndex negative",
      { transport: { ...BOOT, engineStartIndex: -1 } },
      "transport.engineStartIndex",
      /\[0, 65535\]/,
    ],
    [
      "engine range beyond the 2-byte identity",
      { transport: { ...BOOT, engineStartIndex: 65_535, engineCount: 2 } },
      "transport.engineCount",
      /engine indices 65535\.\.65536 do not fit the 2-byte engine identity/,
    ],
    [
      "clientIndex negative",
      { transport: BOOT, clientIndex: -1 },
      "clientIndex",
      /integer in \[0, 2147483647\]/,
    ],
    [
      "clientIndex non-zero with handshake-owner",
      { transport: OWNER, clientIndex: 1 },
      "clientIndex",
      /must be 0 with the handshake-owner transport \(got 1\)/,
    ],
    [
      "structuredOutputs.backend unknown",
      { transport: OWNER, structuredOutputs: { backend: "llguidance" } },
      "structuredOutputs.backend",
      /expected one of "auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer", got "llguidance"/,
    ],
    [
      "modelName not a string",
      { transport: OWNER, modelName: 5 },
      "modelName",
      /expected a string, got number/,
    ],
    [
      "in-process coordinator with bootstrapped",
      { transport: BOOT, coordinator: { mode: "inproc" } },
      "coordinator",
      /in-process coordinator needs the handshake-owner transport/,
    ],
    [
      "external coordinator with handshake-owner",
      { transport: OWNER, coordinator: { mode: "external", address: "tcp://127.0.0.1:1" } },
      "coordinator",
      /only supported with the bootstrapped transport/,
    ],
    [
      "external coordinator address not an endpoint",
      { transport: BOOT, coordinator: { mode: "external", address: "coord" } },
      "coordinator.address",
      /ZeroMQ endpoint/,
    ],
    [
      "unknown coordinator mode",
      { transport: OWNER, coordinator: { mode: "x" } },
      "coordinator.mode",
      /inproc/,
    ],
    ["coordinator not an object", { transport: OWNER, coordinator: "inproc" }, "coordinator", /object/],
    [
      "heartbeat not an object",
      { transport: { ...OWNER, heartbeat: 5 } },
      "transport.heartbeat",
      /intervalMs/,
    ],
    [
      "heartbeat interval negative",
      { transport: { ...OWNER, heartbeat: { intervalMs: -1 } } },
      "transport.heartbeat.intervalMs",
      /\[0, 2147483647\], got -1/,
    ],
    [
      "heartbeat interval fractional (libzmq takes int ms)",
      { transport: { ...BOOT, heartbeat: { intervalMs: 0.5 } } },
      "transport.heartbeat.intervalMs",
      /got 0\.5/,
    ],
    [
      "heartbeat timeout 0",
      { transport: { ...OWNER, heartbeat: { timeoutMs: 0 } } },
      "transport.heartbeat.timeoutMs",
      /\[1, 2147483647\], got 0/,
    ],
    [
      "heartbeat timeout above int32",
      { transport: { ...BOOT, heartbeat: { timeoutMs: MAX + 1 } } },
      "transport.heartbeat.timeoutMs",
      /got 2147483648/,
    ],
    [
      "sentinel window negative",
      { transport: { ...OWNER, sentinelAttributionWindowMs: -1 } },
      "transport.sentinelAttributionWindowMs",
      /\[0, 2147483647\], got -1/,
    ],
    [
      "sentinel window not a number",
      { transport: { ...BOOT, sentinelAttributionWindowMs: "5s" } },
      "transport.sentinelAttributionWindowMs",
      /got 5s/,
    ],
    [
      "vanish grace NaN",
      { transport: { ...OWNER, vanishGraceMs: Number.NaN } },
      "transport.vanishGraceMs",
      /got NaN/,
    ],
  ];

  it.each(cases)("%s", (_what, config, field, detail) => {
    const error = rejection(config);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.field).toBe(field);
    expect(error.detail).toMatch(detail);
    expect(error.message).toBe(
      `Invalid EngineCoreClient config at \`${field}\`: ${error.detail}. Fix the config and connect again.`,
    );
  });
});
