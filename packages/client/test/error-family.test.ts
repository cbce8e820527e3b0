// The one error family, as the client exports it: every public error extends VllmEngineCoreError, has a
// stable name/code, structured fields, a helpful message, and makes a lossless trip through serializeError →
// structuredClone → deserializeError (what crossing a thread does), found by its code with no hand-kept list.
import { describe, expect, it } from "vitest";
import {
  BindError,
  ClientClosedError,
  ConcurrentReadError,
  ConnectAbortedError,
  DuplicateRequestIdError,
  deserializeError,
  EngineDeadError,
  HandshakeTimeoutError,
  InconsistentUtilityResultsError,
  InvalidConfigError,
  InvalidConnectionHandleError,
  InvalidDataParallelRankError,
  InvalidRequestError,
  isSerializedError,
  ProtocolError,
  RequestStreamClosedError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  serializeError,
  TransportOutsideRuntimeError,
  TransportUsageError,
  UnexpectedEngineIdentityError,
  UnexpectedHandshakeMessageError,
  UtilityCallError,
  UtilityNotAvailableError,
  UtilityTimeoutError,
  VllmEngineCoreError,
} from "../src/index.js";

const samples: [VllmEngineCoreError, string, Record<string, unknown>][] = [
  [
    new ProtocolError({ struct: "EngineCoreOutputs", field: "EngineCoreOutputs.outputs[0]", detail: "bad" }),
    "PROTOCOL_ERROR",
    {
      struct: "EngineCoreOutputs",
      field: "EngineCoreOutputs.outputs[0]",
      detail: "bad",
      direction: "decode",
    },
  ],
  [
    new ProtocolError({
      struct: "EngineCoreOutputs",
      field: "EngineCoreOutputs.outputs[1].new_token_ids",
      detail: "expected array, got str",
      engineIndex: 2,
      outcome: "requests-failed",
    }),
    "PROTOCOL_ERROR",
    {
      struct: "EngineCoreOutputs",
      field: "EngineCoreOutputs.outputs[1].new_token_ids",
      engineIndex: 2,
      outcome: "requests-failed",
    },
  ],
  [
    new HandshakeTimeoutError({
      stage: "READY",
      engineIndex: 1,
      address: "tcp://127.0.0.1:1",
      timeoutMs: 500,
    }),
    "HANDSHAKE_TIMEOUT",
    { stage: "READY", engineIndex: 1, address: "tcp://127.0.0.1:1", timeoutMs: 500 },
  ],
  [
    new UnexpectedHandshakeMessageError({ engineIndex: 0, address: "a", detail: "duplicate HELLO" }),
    "UNEXPECTED_HANDSHAKE_MESSAGE",
    { engineIndex: 0, address: "a", detail: "duplicate HELLO" },
  ],
  [
    new UnexpectedEngineIdentityError({ identityHex: "aabbcc", address: "a", expected: "a 2-byte index" }),
    "UNEXPECTED_ENGINE_IDENTITY",
    { identityHex: "aabbcc", engineIndex: null, expectedRange: null, expected: "a 2-byte index" },
  ],
  [
    new UnexpectedEngineIdentityError({
      identityHex: "0500",
      engineIndex: 5,
      address: "a",
      expected: "engine indices 0…1",
      expectedRange: { start: 0, count: 2 },
    }),
    "UNEXPECTED_ENGINE_IDENTITY",
    {
      identityHex: "0500",
      engineIndex: 5,
      expectedRange: { start: 0, count: 2 },
      expected: "engine indices 0…1",
      message: expect.stringContaining("0x0500 (engine index 5) connected to a, expected engine indices 0…1"),
    },
  ],
  [
    new BindError({ address: "tcp://127.0.0.1:1", socket: "input", causeMessage: "EADDRINUSE" }),
    "BIND_FAILED",
    { socket: "input", causeMessage: "EADDRINUSE" },
  ],
  [new TransportOutsideRuntimeError(), "TRANSPORT_OUTSIDE_RUNTIME", {}],
  [
    new EngineDeadError({ engineIndex: null, reason: "ENGINE_CORE_DEAD" }),
    "ENGINE_DEAD",
    { engineIndex: null },
  ],
  [
    new RuntimeCrashedError({ reason: "worker exited with code 1" }),
    "RUNTIME_CRASHED",
    { reason: "worker exited with code 1" },
  ],
  [new RuntimeHostUnavailableError({ detail: "port closed" }), "RUNTIME_HOST_UNAVAILABLE", {}],
  [new ClientClosedError(), "CLIENT_CLOSED", {}],
  [new DuplicateRequestIdError({ requestId: "r1" }), "DUPLICATE_REQUEST_ID", { requestId: "r1" }],
  [
    new InvalidConnectionHandleError({ received: "a string" }),
    "INVALID_CONNECTION_HANDLE",
    { received: "a string" },
  ],
  [
    new InvalidRequestError({ requestId: "r1", field: "samplingParams.topP", detail: "must be in (0, 1]" }),
    "INVALID_REQUEST",
    { requestId: "r1", field: "samplingParams.topP" },
  ],
  [
    new InvalidDataParallelRankError({ rank: 3, engineIndices: [0, 1] }),
    "INVALID_DATA_PARALLEL_RANK",
    { rank: 3, engineIndices: [0, 1] },
  ],
  [
    new UtilityCallError({ method: "sleep", engineIndex: 0, failureMessage: "boom" }),
    "UTILITY_CALL_FAILED",
    { method: "sleep", failureMessage: "boom" },
  ],
  [
    new InconsistentUtilityResultsError({ method: "is_sleeping", results: [true, false] }),
    "INCONSISTENT_UTILITY_RESULTS",
    { results: [true, false] },
  ],
  [
    new UtilityTimeoutError({ method: "sleep", engineIndices: [1, 3], timeoutMs: 250 }),
    "UTILITY_TIMEOUT",
    { method: "sleep", engineIndices: [1, 3], timeoutMs: 250 },
  ],
  [
    new UtilityNotAvailableError({
      method: "get_weight_version",
      engineIndex: 1,
      reportedVersion: "0.25.1",
      engineVersions: ["0.25"],
      since: "main",
    }),
    "UTILITY_NOT_AVAILABLE",
    { method: "get_weight_version", engineIndex: 1, engineVersions: ["0.25"], since: "main" },
  ],
  [new RequestStreamClosedError({ requestId: "r2" }), "REQUEST_STREAM_CLOSED", { requestId: "r2" }],
  [new ConnectAbortedError(), "CONNECT_ABORTED", {}],
  [new TransportUsageError({ detail: "startOutputLoop() called twice" }), "TRANSPORT_USAGE", {}],
  [
    new InvalidConfigError("transport.heartbeat.timeoutMs", "must be a positive integer"),
    "INVALID_CONFIG",
    { field: "transport.heartbeat.timeoutMs", detail: "must be a positive integer" },
  ],
  [new ConcurrentReadError("r3"), "CONCURRENT_READ", { requestId: "r3" }],
];

describe("typed errors", () => {
  it.each(samples.map((s) => [s[0].name, ...s] as const))("%s", (name, err, code, fields) => {
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(VllmEngineCoreError);
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err).toMatchObject(fields);
    // Messages say what happened and what to do: at least two sentences.
    expect(err.message.split(/\.\s/).length).toBeGreaterThanOrEqual(2);

    const wire = structuredClone(serializeError(err));
    expect(isSerializedError(wire)).toBe(true);
    expect(wire.__vllmError).toBe(name);
    const back = deserializeError(wire);
    expect(back).toBeInstanceOf(err.constructor as new () => Error);
    expect(back.name).toBe(name);
    expect(back.message).toBe(err.message);
    expect(back.stack).toBe(err.stack);
    expect((back as VllmEngineCoreError).code).toBe(code);
    expect(back).toMatchObject(fields);
  });

  it("unknown or plain errors come back as plain Errors with their message", () => {
    const plain = deserializeError(structuredClone(serializeError(new TypeError("nope"))));
    expect(plain).toBeInstanceOf(Error);
    expect(plain.name).toBe("TypeError");
    expect(plain.message).toBe("nope");
    expect(
      deserializeError({ __vllmError: "SomethingNew", message: "m", stack: undefined, data: {} }).message,
    ).toBe("m");
    expect(deserializeError("just a string").message).toBe("just a string");
    expect(serializeError(42).message).toBe("42");
  });

  it("EngineDeadError advice depends on whether requests were in flight or the engine died while connecting", () => {
    const running = new EngineDeadError({ engineIndex: 1, reason: "gone" });
    const starting = new EngineDeadError({ engineIndex: 1, reason: "gone", duringStartup: true });
    expect(running.message).toBe(
      "Engine 1 is dead: gone. In-flight requests were failed; check the engine's logs and restart it, then reconnect.",
    );
    expect(starting.message).toBe(
      "Engine 1 is dead: gone. The connect failed; check the engine's logs, fix the cause and connect again.",
    );
    const crossed = deserializeError(structuredClone(serializeError(starting)));
    expect(crossed).toBeInstanceOf(EngineDeadError);
    expect(crossed.message).toBe(starting.message);
  });

  it("every code names one class", () => {
    const codes = samples.map((s) => s[1]);
    const classes = new Map<string, unknown>();
    for (const [err, code] of samples) {
      expect(classes.get(code) ?? err.constructor, code).toBe(err.constructor);
      classes.set(code, err.constructor);
    }
    expect(new Set(codes).size).toBe(classes.size);
  });
});
