import { createServer } from "node:net";
import { expectedTokens, startMockEngine } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClientClosedError,
  DuplicateRequestIdError,
  EngineCoreClient,
  EngineCoreOutputStream,
  EngineDeadError,
  FinishReason,
  InconsistentUtilityResultsError,
  InvalidConfigError,
  InvalidRequestError,
  UtilityCallError,
} from "../src/index.js";
import { chatRequest, collect, connectToMockEngine, type Harness, ipcAddress } from "./helpers.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("EngineCoreClient against the mock engine (child process)", () => {
  it("exposes the engines' ready responses", async () => {
    harness = await connectToMockEngine({ engineCount: 2 });
    const { client } = harness;
    expect(client.engineCount).toBe(2);
    expect(client.engineIndices).toEqual([0, 1]);
    expect(client.readyResponses.map((r) => r.dataParallelRank)).toEqual([0, 1]);
    expect(client.inputAddress).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(client.outputAddress).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(client.maxModelLen).toBeGreaterThan(0);
    expect(typeof client.modelDtype).toBe("string");
    expect(client.isHealthy).toBe(true);
    expect(client.healthError).toBeUndefined();
  });

  it("streams 1,000 concurrent requests to completion with the right tokens", async () => {
    harness = await connectToMockEngine({ stepMs: 1, tokensPerStep: 2 });
    const { client } = harness;
    const requests = Array.from({ length: 1000 }, (_, i) => chatRequest(`req-${i}`, 8 + (i % 9)));
    const streams = await Promise.all(requests.map((r) => client.call(r)));
    const results = await Promise.all(streams.map((s) => collect(s)));
    results.forEach(({ tokens, last }, i) => {
      const req = requests[i]!;
      const maxTokens = req.samplingParams!.maxTokens!;
      expect(tokens).toEqual(expectedTokens(req.requestId, req.promptTokenIds!, maxTokens));
      expect(last.finishReason).toBe(FinishReason.LENGTH);
    });
  });

  it("rejects invalid requests before anything reaches the engine", async () => {
    harness = await connectToMockEngine();
    const { client, engine } = harness;
    const bad = [
      { ...chatRequest("hot", 4), samplingParams: { maxTokens: 4, temperature: 2.5 } },
      { ...chatRequest("empty", 4), promptTokenIds: [] },
      { ...chatRequest("frac", 4), promptTokenIds: [1, 2.5] },
      chatRequest("zero", 0),
      { ...chatRequest("nan", 4), samplingParams: { maxTokens: 4, temperature: Number.NaN } },
      { ...chatRequest("long", 4), promptTokenIds: new Array(client.maxModelLen + 1).fill(7) },
      // Exactly max_model_len: no room for an output token; vLLM's scheduler would keep it forever.
      { ...chatRequest("full", 4), promptTokenIds: new Array(client.maxModelLen).fill(7) },
      { ...chatRequest("both", 4), poolingParams: { task: "embed" } },
    ];
    for (const request of bad) {
      await expect(client.call(request as never)).rejects.toBeInstanceOf(InvalidRequestError);
    }
    // A valid request afterwards still works and is the only ADD the engine saw.
    await collect(await client.call(chatRequest("ok", 2)));
    const adds = engine.events.filter((e) => e.event === "add").map((e) => e.requestId);
    expect(adds).toEqual(["ok"]);
  });

  it("sessionId is sent as EngineCoreRequest's 21st element only when set; the pin's engine skips it", async () => {
    harness = await connectToMockEngine();
    const { client, engine } = harness;
    await collect(await client.call({ ...chatRequest("with-session", 2), sessionId: "conversation-7" }));
    await collect(await client.call(chatRequest("without-session", 2)));
    const add = (id: string) => engine.events.find((e) => e.event === "add" && e.requestId === id);
    // Both decoded and served; the session id arrived after the 20 fields the engine knows.
    expect(add("with-session")?.skippedTrailing).toEqual(["conversation-7"]);
    expect(add("without-session")).toBeDefined();
    expect(add("without-session")?.skippedTrailing).toBeUndefined();
  });

  it("rejects a duplicate live request id and keeps the first stream intact", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const { client } = harness;
    const first = await client.call(chatRequest("dup", 6));
    await expect(client.call(chatRequest("dup", 6))).rejects.toBeInstanceOf(DuplicateRequestIdError);
    const { tokens } = await collect(first);
    expect(tokens).toHaveLength(6);
    // Once finished, the id can be reused.
    expect((await collect(await client.call(chatRequest("dup", 2)))).tokens).toHaveLength(2);
  });

  it("abort() finalises the stream locally and sends ABORT to the engine", async () => {
    harness = await connectToMockEngine({ stepMs: 10 });
    const { client, engine } = harness;
    const stream = await client.call(chatRequest("to-abort", 10_000));
    const firstOutput = await stream.next();
    expect(firstOutput.done).toBe(false);
    await client.abort(["to-abort", "never-existed"]);
    const { last } = await collect(stream);
    expect(last.finishReason).toBe(FinishReason.ABORT);
    const abortEvent = await engine.waitForEvent((e) => e.event === "abort", 5_000);
    expect(abortEvent.requestIds).toEqual(["to-abort"]);
  });

  it("leaving a stream early (break, signal) aborts the request on the engine", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const { client, engine } = harness;
    const stream = await client.call(chatRequest("left-early", 10_000));
    for await (const _ of stream) break;
    await engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("left-early"),
      5_000,
    );

    const controller = new AbortController();
    const signalled = await client.call(chatRequest("by-signal", 10_000), { signal: controller.signal });
    await signalled.next();
    const reason = new Error("caller gave up");
    controller.abort(reason);
    await expect(signalled.next()).rejects.toBe(reason);
    await engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("by-signal"),
      5_000,
    );
  });

  it("finish() ends the stream and aborts on the engine, but the request counts as finished", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const { client, engine } = harness;
    const stream = await client.call(chatRequest("finished-here", 10_000));
    expect((await stream.next()).done).toBe(false);
    stream.finish("stop");
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    await engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("finished-here"),
      5_000,
    );
    expect(stream.timings).toMatchObject({ finishReason: "stop", finishedBy: "frontend" });
    // Once ended, finish() changes nothing (the outcome is not rewritten).
    stream.finish("length");
    expect(stream.timings.finishReason).toBe("stop");
  });

  it("a stream is read-only for its reader: a private constructor, nothing that feeds it or ends it for the engine", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const stream = await harness.client.call(chatRequest("read-only", 2));
    expect(stream).toBeInstanceOf(EngineCoreOutputStream);
    // Checked by the typecheck: the constructor is private (only call() makes a stream).
    // @ts-expect-error
    const construct = () => new EngineCoreOutputStream(undefined as never);
    expect(typeof construct).toBe("function");
    expect(Object.keys(stream)).toEqual([]);
    expect(Object.getOwnPropertyNames(EngineCoreOutputStream.prototype).sort()).toEqual(
      [
        "constructor",
        "engineIndex",
        "finish",
        "lastTimestamp",
        "next",
        "requestId",
        "return",
        "timings",
      ].sort(),
    );
    expect(stream.engineIndex).toBe(0);
    expect(() => {
      (stream as unknown as { engineIndex: number }).engineIndex = 3;
    }).toThrow(TypeError);
    expect((await collect(stream)).tokens).toHaveLength(2);
  });

  it("utility calls: success, engine failure, consensus", async () => {
    harness = await connectToMockEngine({ engineCount: 2 });
    const { client } = harness;
    expect(await client.isSleeping()).toBe(false);
    expect(await client.resetPrefixCache()).toBe(true);
    expect(await client.callUtility("echo", ["hello", 3])).toEqual([
      ["hello", 3],
      ["hello", 3],
    ]);
    const failure = await client.callUtility("no_such_method").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UtilityCallError);
    expect((failure as UtilityCallError).message).toContain("no_such_method");
    // Engines answer with their own index: results differ, so consensus must fail.
    const mismatch = await client.callUtilityConsensus("engine_index").catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(InconsistentUtilityResultsError);
  });

  it("two engines share the load", async () => {
    harness = await connectToMockEngine({ engineCount: 2, stepMs: 5 });
    const { client, engine } = harness;
    const streams = await Promise.all(
      Array.from({ length: 40 }, (_, i) => client.call(chatRequest(`lb-${i}`, 5))),
    );
    await Promise.all(streams.map((s) => collect(s)));
    const perEngine = [0, 0];
    for (const s of streams) perEngine[s.engineIndex]! += 1;
    expect(perEngine[0]).toBeGreaterThanOrEqual(15);
    expect(perEngine[1]).toBeGreaterThanOrEqual(15);
    const adds = engine.events.filter((e) => e.event === "add");
    expect(new Set(adds.map((e) => e.engineIndex))).toEqual(new Set([0, 1]));
  });

  it("an engine crash mid-stream fails that engine's streams with EngineDeadError", async () => {
    harness = await connectToMockEngine({ stepMs: 5, faults: { deadSentinelAfterSteps: 20 } });
    const { client } = harness;
    const stream = await client.call(chatRequest("doomed", 100_000));
    const error = await collect(stream).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineDeadError);
    expect(client.isHealthy).toBe(false);
    expect(client.healthError).toBeInstanceOf(EngineDeadError);
    await expect(client.call(chatRequest("after-death", 2))).rejects.toBeInstanceOf(EngineDeadError);
  });

  it("shutdown fails open streams with ClientClosedError and is idempotent; await using works", async () => {
    harness = await connectToMockEngine({ stepMs: 10 });
    const { client } = harness;
    const stream = await client.call(chatRequest("open", 100_000));
    await client.shutdown();
    await client.shutdown();
    await expect(collect(stream)).rejects.toBeInstanceOf(ClientClosedError);
    await expect(client.call(chatRequest("late", 2))).rejects.toBeInstanceOf(ClientClosedError);
  });

  it("a second shutdown() while the first is under way resolves only once the sockets are closed", async () => {
    harness = await connectToMockEngine({ stepMs: 10 });
    const { client } = harness;
    await collect(await client.call(chatRequest("before", 2)));
    // The same client twice, and a second client of the same connection on this thread.
    const other = await EngineCoreClient.attach(client.handle);
    const first = client.shutdown();
    await client.shutdown();
    await expectPortsFree(client);
    await other.shutdown();
    await first;
    await harness.close();

    harness = await connectToMockEngine({ stepMs: 10 });
    const again = harness.client;
    const sibling = await EngineCoreClient.attach(again.handle);
    const pending = again.shutdown();
    await sibling.shutdown();
    await expectPortsFree(again);
    await pending;
  });

  it("`await using` shuts the client down at the end of the scope", async () => {
    const handshakeAddress = ipcAddress("scoped");
    const engine = await startMockEngine({ handshakeAddress, engineIndices: [0], stepMs: 2 });
    let escaped: EngineCoreClient | undefined;
    try {
      await using scoped = await EngineCoreClient.connect({
        transport: { mode: "handshake-owner", handshakeAddress },
      });
      escaped = scoped;
      expect((await collect(await scoped.call(chatRequest("scoped", 3)))).tokens).toHaveLength(3);
    } finally {
      await engine.stop();
    }
    await expect(escaped.call(chatRequest("after-scope", 2))).rejects.toBeInstanceOf(ClientClosedError);
  });

  it("two clients on one thread share a connection: abort ends the other's stream, detach spares it", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const { client, engine } = harness;
    const second = await EngineCoreClient.attach(client.handle);
    const stream = await client.call(chatRequest("shared-a", 100_000));
    await stream.next();
    await second.abort("shared-a");
    const { last } = await collect(stream);
    expect(last.finishReason).toBe(FinishReason.ABORT);
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds ?? []).includes("shared-a"), 5_000);

    const own = await second.call(chatRequest("shared-b", 100_000));
    const kept = await client.call(chatRequest("shared-c", 6));
    await second.detach();
    await expect(collect(own)).rejects.toBeInstanceOf(ClientClosedError);
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds ?? []).includes("shared-b"), 5_000);
    expect((await collect(kept)).tokens).toHaveLength(6);
    expect((await collect(await client.call(chatRequest("shared-d", 2)))).tokens).toHaveLength(2);
    await expect(second.call(chatRequest("shared-e", 2))).rejects.toBeInstanceOf(ClientClosedError);
  });

  it("consensus accepts equal empty containers", async () => {
    harness = await connectToMockEngine({ engineCount: 2 });
    expect(await harness.client.callUtilityConsensus("echo", [])).toEqual([]);
    expect(await harness.client.callUtilityConsensus("echo", [{}])).toEqual([{}]);
  });

  it("rejects invalid configs with InvalidConfigError before starting anything", async () => {
    await expect(
      EngineCoreClient.connect({ transport: { mode: "handshake-owner", handshakeAddress: "localhost:1" } }),
    ).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(
      EngineCoreClient.connect({
        transport: { mode: "handshake-owner", handshakeAddress: "tcp://127.0.0.1:1", engineCount: 0 },
      }),
    ).rejects.toBeInstanceOf(InvalidConfigError);
  });
});

/** Closed means released: a plain TCP listener can take each of the client's ports at once. */
async function expectPortsFree(client: EngineCoreClient): Promise<void> {
  for (const address of [client.inputAddress, client.outputAddress]) {
    const port = Number(new URL(address).port);
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen({ port, host: "127.0.0.1" }, () => server.close(() => resolve()));
    });
  }
}
