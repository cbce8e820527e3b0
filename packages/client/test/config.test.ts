// Transport tuning set in EngineCoreClientConfig reaches the transport on the runtime thread (real sockets,
// the mock engine in a real child process).
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { EngineCoreClient, EngineDeadError } from "../src/index.js";
import { chatRequest, ipcAddress } from "./helpers.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe("transport tuning from EngineCoreClientConfig", () => {
  it("a tuned heartbeat reaches the transport: a frozen (SIGSTOP) engine is dead after about intervalMs + timeoutMs", async () => {
    const heartbeat = { intervalMs: 200, timeoutMs: 800 };
    const handshakeAddress = ipcAddress("hb");
    const engine: MockEngineProcess = await startMockEngine({
      handshakeAddress,
      engineIndices: [0],
      stepMs: 5,
    });
    let client: EngineCoreClient | undefined;
    cleanup = async () => {
      engine.kill("SIGKILL"); // a stopped process only reacts to SIGKILL
      await client?.shutdown();
      await engine.stop();
    };
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000, heartbeat },
    });
    const stream = await client.call(chatRequest("frozen", 1_000_000));
    await stream.next(); // the engine is serving
    const outcome = (async () => {
      try {
        for await (const _ of stream);
        return { error: undefined, at: performance.now() };
      } catch (error) {
        return { error, at: performance.now() };
      }
    })();

    const stoppedAt = performance.now();
    engine.kill("SIGSTOP");
    const { error, at } = await outcome;
    const detectionMs = at - stoppedAt;
    console.log(
      `[client] SIGSTOP with heartbeat ${heartbeat.intervalMs}/${heartbeat.timeoutMs} ms: dead after ${detectionMs.toFixed(0)} ms`,
    );

    expect(error).toBeInstanceOf(EngineDeadError);
    // The transport words the reason with the heartbeat timeout it was given.
    expect((error as EngineDeadError).reason).toContain(
      `missed ZMTP heartbeats for ${heartbeat.timeoutMs} ms`,
    );
    expect(client.healthError).toBeInstanceOf(EngineDeadError);
    // libzmq drops the connection `timeoutMs` after a PING that got no answer (up to `intervalMs` later), then
    // the 50 ms vanish grace: about 0.8–1.05 s here. The default heartbeat (1000/5000) takes about 6 s, so the
    // generous upper bound still tells the two apart.
    expect(detectionMs).toBeGreaterThan(heartbeat.timeoutMs - 100);
    expect(detectionMs).toBeLessThan(4_000);
  });
});
