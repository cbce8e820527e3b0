// Priority 6: a handshake that never completes. The connect must fail with HandshakeTimeoutError naming
// the stage and the engine, after about readyTimeoutMs, and leave the address usable right away.
import { EngineCoreClient, EngineDeadError, HandshakeTimeoutError } from "@vllm-engine-core/client";
import type { MockEngineOptions, MockEngineProcess } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { chatRequest, ipcAddress, removeIpcFiles, startEngines, stopAll, track } from "../src/harness.ts";

let engines: MockEngineProcess[] = [];
afterEach(async () => {
  await stopAll(engines);
  engines = [];
  removeIpcFiles();
});

// Each handshake wait gets this long. The stages before the one that hangs must finish inside it, which takes
// a few ms on an idle machine but took over 1.5 s on a loaded 2-core one (a HELLO timeout instead of REGISTRATION).
const TIMEOUT_MS = 3_000;

async function failedConnect(processes: Partial<MockEngineOptions>[], engineCount: number) {
  const handshakeAddress = ipcAddress("hs");
  engines = await startEngines(handshakeAddress, processes);
  const started = performance.now();
  const error = await EngineCoreClient.connect({
    transport: { mode: "handshake-owner", handshakeAddress, engineCount, readyTimeoutMs: TIMEOUT_MS },
  }).then(
    async (client) => {
      await client.shutdown();
      throw new Error("connect succeeded although the handshake cannot complete");
    },
    (e: unknown) => e,
  );
  return { error: error as HandshakeTimeoutError, elapsed: performance.now() - started, handshakeAddress };
}

/** The handshake address binds again at once and serves a request. */
async function addressReusable(handshakeAddress: string) {
  await stopAll(engines);
  engines = await startEngines(handshakeAddress, [{ engineIndices: [0] }]);
  const client = await EngineCoreClient.connect({
    transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
  });
  try {
    expect((await (await track(client, chatRequest("after-timeout", 2))).outcome).tokens).toHaveLength(2);
  } finally {
    await client.shutdown();
  }
}

function expectTimeout(
  result: Awaited<ReturnType<typeof failedConnect>>,
  stage: HandshakeTimeoutError["stage"],
  engineIndex: number | null,
) {
  const { error, elapsed, handshakeAddress } = result;
  console.log(
    `[reliability] handshake timeout (${stage}, engine ${engineIndex}): rejected after ${elapsed.toFixed(0)} ms (readyTimeoutMs ${TIMEOUT_MS}): ${error.message}`,
  );
  expect(error).toBeInstanceOf(HandshakeTimeoutError);
  expect(error.name).toBe("HandshakeTimeoutError");
  expect(error.code).toBe("HANDSHAKE_TIMEOUT");
  expect(error.stage).toBe(stage);
  expect(error.engineIndex).toBe(engineIndex);
  expect(error.timeoutMs).toBe(TIMEOUT_MS);
  if (stage !== "REGISTRATION") expect(error.address).toBe(handshakeAddress);
  expect(error.message).toContain(engineIndex === null ? "an engine" : `engine ${engineIndex}`);
  // A per-stage bound: at least the timeout, and not wildly more (earlier stages take a few ms here).
  expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsed).toBeLessThan(TIMEOUT_MS + 5_000);
}

describe("handshake that never completes", () => {
  it("no engine at all → stage HELLO, no engine index", async () => {
    const result = await failedConnect([], 1);
    expectTimeout(result, "HELLO", null);
    await addressReusable(result.handshakeAddress);
  });

  it("faults.noReady → stage READY naming the engine", async () => {
    const result = await failedConnect([{ engineIndices: [0], faults: { noReady: true } }], 1);
    expectTimeout(result, "READY", 0);
    await addressReusable(result.handshakeAddress);
  });

  it("faults.noRegistration → stage REGISTRATION naming the engine", async () => {
    const result = await failedConnect([{ engineIndices: [0], faults: { noRegistration: true } }], 1);
    expectTimeout(result, "REGISTRATION", 0);
    await addressReusable(result.handshakeAddress);
  });

  it("two engines, engine 1 never sends READY → the error names engine 1", async () => {
    const result = await failedConnect(
      [{ engineIndices: [0] }, { engineIndices: [1], faults: { noReady: true } }],
      2,
    );
    expectTimeout(result, "READY", 1);
  });

  it("two engines, engine 1 never registers → the error names engine 1", async () => {
    const result = await failedConnect(
      [{ engineIndices: [0] }, { engineIndices: [1], faults: { noRegistration: true } }],
      2,
    );
    expectTimeout(result, "REGISTRATION", 1);
  });
});

describe("engine that dies during the handshake", () => {
  it("SIGKILL after INIT: EngineDeadError naming the engine as soon as it disconnects, not a READY timeout", async () => {
    // The handshake ROUTER reports disconnects (ROUTER_NOTIFY): an engine that said HELLO and then drops its
    // connection has died during startup. (vLLM's Rust client waits the full readyTimeoutMs here.)
    const handshakeAddress = ipcAddress("hs");
    engines = await startEngines(handshakeAddress, [{ engineIndices: [0], faults: { noReady: true } }]);
    const pending = EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    }).then(
      () => new Error("connected"),
      (e: unknown) => e,
    );
    await engines[0]!.waitForEvent((e) => e.event === "init");
    const killedAt = performance.now();
    engines[0]!.kill("SIGKILL");
    const error = (await pending) as EngineDeadError;
    const elapsed = performance.now() - killedAt;
    console.log(
      `[reliability] engine killed after INIT: connect failed ${elapsed.toFixed(1)} ms later (${error.message})`,
    );
    expect(error).toBeInstanceOf(EngineDeadError);
    expect(error.engineIndex).toBe(0);
    expect(error.reason).toContain(`disconnected from the handshake socket ${handshakeAddress} after HELLO`);
    expect(error.message).toMatch(
      /\. The connect failed; check the engine's logs, fix the cause and connect again\.$/,
    );
    expect(elapsed).toBeLessThan(5_000); // the READY timeout is 20 s
  });
});
