// The shared consumer thread for real: the probe's built worker attached to the product client against
// the mock engine (child process), and a worker error reaching the main thread's waits.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConsumerThread, withAttachedConsumer } from "../src/consumer/thread.js";
import type { FromConsumer, ToConsumer } from "../src/consumer-protocol.js";
import { startProbeEngine } from "../src/engine.js";
import { freeTcpPort } from "../src/net.js";

const worker = new URL("../dist/consumer-worker.js", import.meta.url);
// Plain Node resolution in the worker (built dist), not the test runner's source condition.
const plainNode = { execArgv: [] };

describe("consumer thread", () => {
  it("attaches the worker to the product client, runs the tool's messages, then closes all three", async () => {
    expect(existsSync(fileURLToPath(worker)), "build the probe first").toBe(true);
    const handshakeAddress = `tcp://127.0.0.1:${await freeTcpPort()}`;
    const engine = await startProbeEngine({ handshakeAddress, stepMs: 2 });
    const consumer = new ConsumerThread<FromConsumer, ToConsumer>(worker, plainNode);
    const order: string[] = [];
    const stopped = await withAttachedConsumer(
      {
        consumer,
        engine: { handshakeAddress, stop: () => engine.stop() },
        beforeAttach: ({ client }) => order.push(`connected ${client.inputAddress !== ""}`),
      },
      async ({ markerFd }) => {
        order.push("attached");
        expect(markerFd === undefined || Number.isInteger(markerFd)).toBe(true);
        consumer.send({ type: "start", count: 2, maxTokens: 1_000_000, prefix: "t", tokensPerStep: 1 });
        await consumer.expect("flowing");
        consumer.send({ type: "stop" });
        return consumer.expect("stopped");
      },
    );
    expect(order).toEqual(["connected true", "attached"]);
    // (send, receive) pairs of every output counted: at least the first one of a stream.
    expect(stopped.pairs.length).toBeGreaterThanOrEqual(2);
    expect(stopped.pairs.length % 2).toBe(0);
    expect(await engine.exited).toBeDefined();
  }, 60_000);

  it("fails the main thread's wait with the worker's error, and still closes", async () => {
    const consumer = new ConsumerThread<FromConsumer, ToConsumer>(worker, plainNode);
    await consumer.control.expect("marker");
    consumer.send({ type: "start", count: 1, maxTokens: 1, prefix: "early", tokensPerStep: 1 });
    await expect(consumer.expect("flowing")).rejects.toThrow("consumer thread: Error: start before attach");
    await consumer.close();
  }, 30_000);
});
