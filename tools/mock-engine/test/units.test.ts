import { describe, expect, it } from "vitest";
import {
  echoedTokens,
  expectedTokens,
  MOCK_VOCAB_SIZE,
  type MockEngineOptions,
  MockEngineOptionsError,
  type TimestampMode,
  toArgv,
} from "../src/index.js";
import { helpText, parseArgv, resolveOptions } from "../src/options.js";
import { FINISH_LENGTH, FINISH_STOP, MockScheduler } from "../src/scheduler.js";

describe("expectedTokens", () => {
  it("is deterministic, prefix-stable and depends on id and prompt", () => {
    const a = expectedTokens("r", [1, 2, 3], 50);
    expect(expectedTokens("r", [1, 2, 3], 50)).toEqual(a);
    expect(expectedTokens("r", [1, 2, 3], 20)).toEqual(a.slice(0, 20));
    expect(expectedTokens("r2", [1, 2, 3], 50)).not.toEqual(a);
    expect(expectedTokens("r", [1, 2, 4], 50)).not.toEqual(a);
    expect(a.every((t) => Number.isInteger(t) && t >= 0 && t < MOCK_VOCAB_SIZE)).toBe(true);
    expect(new Set(a).size).toBeGreaterThan(40);
    expect(expectedTokens("r", [], 0)).toEqual([]);
  });
});

describe("options", () => {
  it("round-trips every option through the CLI flags", () => {
    const options: MockEngineOptions = {
      mode: "bootstrapped",
      inputAddress: "tcp://127.0.0.1:5000",
      outputAddress: "ipc:///tmp/out",
      coordinatorInput: "tcp://127.0.0.1:5001",
      coordinatorOutput: "tcp://127.0.0.1:5002",
      engineIndices: [2, 5],
      stepMs: 0,
      tokensPerStep: 4,
      echoPrompt: true,
      timestamps: "wall",
      faults: {
        crashAfterSteps: 1,
        deadSentinelAfterSteps: 2,
        stallAfterSteps: 3,
        stallMs: 4,
        badHello: true,
        noReady: true,
        noRegistration: true,
        noCoordinatorSubscription: true,
        garbageFrameAfterSteps: 5,
        utilityDelayMs: 6,
        utilityDelayMethods: ["sleep", "echo"],
        utilityDelayEngines: [5],
      },
      readyResponse: { maxModelLen: 128, dtype: "float16", kvCacheSizeTokens: null },
    };
    expect(parseArgv(toArgv(options))).toEqual(options);
    const atSend: MockEngineOptions = { handshakeAddress: "x", timestamps: "monotonic-at-send" };
    expect(parseArgv(toArgv(atSend))).toEqual(atSend);
    expect(resolveOptions(atSend).timestamps).toBe("monotonic-at-send");
    expect(parseArgv([])).toEqual({});
    expect(parseArgv(["--help"])).toBe("help");
  });

  it("documents every flag in --help", () => {
    const help = helpText();
    for (const flag of toArgv({
      mode: "handshake",
      handshakeAddress: "x",
      engineIndices: [0],
      stepMs: 1,
      tokensPerStep: 1,
      timestamps: "wall",
      faults: {
        crashAfterSteps: 1,
        deadSentinelAfterSteps: 1,
        stallAfterSteps: 1,
        stallMs: 1,
        badHello: true,
        noReady: true,
        noRegistration: true,
        noCoordinatorSubscription: true,
        garbageFrameAfterSteps: 1,
        utilityDelayMs: 1,
        utilityDelayMethods: ["echo"],
        utilityDelayEngines: [0],
      },
      readyResponse: {},
    }).filter((a) => a.startsWith("--"))) {
      expect(help).toContain(flag);
    }
  });

  it("applies defaults and rejects invalid values with MockEngineOptionsError", () => {
    expect(resolveOptions({ handshakeAddress: "ipc:///tmp/h" })).toMatchObject({
      mode: "handshake",
      engineIndices: [0],
      stepMs: 5,
      tokensPerStep: 1,
      timestamps: "monotonic",
    });
    const bad: [MockEngineOptions, string][] = [
      [{}, "handshakeAddress"],
      [{ mode: "bootstrapped", inputAddress: "x" }, "inputAddress"],
      [{ handshakeAddress: "x", engineIndices: [] }, "engineIndices"],
      [{ handshakeAddress: "x", timestamps: "epoch" as TimestampMode }, "timestamps"],
      [
        { mode: "bootstrapped", inputAddress: "i", outputAddress: "o", coordinatorInput: "c" },
        "coordinatorInput",
      ],
      [{ handshakeAddress: "x", coordinatorInput: "c", coordinatorOutput: "d" }, "coordinatorInput"],
      [{ handshakeAddress: "x", engineIndices: [70_000] }, "engineIndices"],
      [{ handshakeAddress: "x", stepMs: -1 }, "stepMs"],
      [{ handshakeAddress: "x", tokensPerStep: 0 }, "tokensPerStep"],
      [{ handshakeAddress: "x", faults: { stallAfterSteps: 2 } }, "faults.stallMs"],
      [{ handshakeAddress: "x", faults: { utilityDelayMs: -5 } }, "faults.utilityDelayMs"],
      [{ handshakeAddress: "x", faults: { utilityDelayMethods: ["echo"] } }, "faults.utilityDelayMs"],
      [
        { handshakeAddress: "x", faults: { utilityDelayMs: 5, utilityDelayMethods: ["a,b"] } },
        "faults.utilityDelayMethods",
      ],
    ];
    for (const [options, option] of bad) {
      expect(() => resolveOptions(options)).toThrow(MockEngineOptionsError);
      try {
        resolveOptions(options);
      } catch (error) {
        expect((error as MockEngineOptionsError).option).toBe(option);
        expect((error as MockEngineOptionsError).code).toBe("MOCK_ENGINE_OPTIONS");
      }
    }
    expect(() => parseArgv(["--step-ms", "fast"])).toThrow(MockEngineOptionsError);
    expect(() => parseArgv(["--utility-delay-engines", "0,x"])).toThrow(MockEngineOptionsError);
    expect(() => parseArgv(["--bogus"])).toThrow(/see --help/);
    expect(() => parseArgv(["--ready-response", "[1]"])).toThrow(MockEngineOptionsError);
  });
});

describe("MockScheduler", () => {
  const spec = (requestId: string, maxTokens: number, clientIndex = 0) => ({
    requestId,
    clientIndex,
    promptTokenIds: [1],
    maxTokens,
    minTokens: 0,
    eosTokenId: null,
    stopTokenIds: [],
  });

  it("admits up to max_num_seqs, groups outputs by client, finishes at max_tokens", () => {
    const s = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 2, tokensPerStep: 1 });
    s.add(spec("a", 1));
    s.add(spec("b", 2, 1));
    s.add(spec("c", 1));
    const first = s.schedule();
    expect(first).toEqual(["a", "b"]);
    expect(s.numWaiting).toBe(1);
    const r1 = s.complete(first);
    expect([...r1.byClient.keys()]).toEqual([0, 1]);
    expect(r1.finished.map((f) => [f.requestId, f.finishReason])).toEqual([["a", FINISH_LENGTH]]);
    const second = s.schedule();
    expect(second).toEqual(["b", "c"]);
    const r2 = s.complete(second);
    expect(r2.finished.map((f) => f.requestId)).toEqual(["b", "c"]);
    expect(s.hasWork()).toBe(false);
  });

  it("echo mode generates the prompt's tokens back, cycling, and still applies the stop rules", () => {
    const s = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 8, tokensPerStep: 2, echoPrompt: true });
    s.add({ ...spec("e", 5), promptTokenIds: [7, 8, 9] });
    const tokens: number[] = [];
    while (s.hasWork()) {
      const r = s.complete(s.schedule());
      for (const outputs of r.byClient.values()) for (const o of outputs) tokens.push(...o.newTokenIds);
    }
    expect(tokens).toEqual([7, 8, 9, 7, 8]);
    expect(echoedTokens([7, 8, 9], 5)).toEqual(tokens);
    const stop = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 8, tokensPerStep: 4, echoPrompt: true });
    stop.add({ ...spec("f", 9), promptTokenIds: [1, 2, 3], eosTokenId: 2 });
    const r = stop.complete(stop.schedule());
    expect(r.finished.map((f) => [f.requestId, f.finishReason, f.tokens])).toEqual([["f", 0, 2]]);
  });

  it("aborts between schedule and complete drop the request's output", () => {
    const s = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 8, tokensPerStep: 1 });
    s.add(spec("x", 5));
    const ids = s.schedule();
    expect(s.abort(["x", "y"])).toEqual(["x"]);
    expect(s.complete(ids).scheduled).toBe(0);
  });

  it("pause states: paused_new keeps running requests, paused_all schedules nothing", () => {
    const s = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 8, tokensPerStep: 1 });
    s.add(spec("run", 5));
    s.complete(s.schedule());
    s.add(spec("new", 5));
    s.setPauseState("paused_new");
    expect(s.numUnfinished).toBe(1);
    expect(s.schedule()).toEqual(["run"]);
    s.setPauseState("paused_all");
    expect(s.hasWork()).toBe(false);
    expect(s.schedule()).toEqual([]);
    expect(s.finishAll().map((r) => r.requestId)).toEqual(["run", "new"]);
  });

  it("stop token beats length on the same token, as in check_stop", () => {
    const s = new MockScheduler({ maxModelLen: 100, maxNumSeqs: 8, tokensPerStep: 1 });
    const [t0] = expectedTokens("s", [1], 1);
    s.add({ ...spec("s", 1), requestId: "s", stopTokenIds: [t0!] });
    const r = s.complete(s.schedule());
    expect(r.finished[0]).toMatchObject({ finishReason: FINISH_STOP, stopReason: t0 });
  });
});
