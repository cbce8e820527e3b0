// Priority 4: a worker thread that attached with EngineCoreClient.attach(handle) and has live streams is
// terminate()d. The runtime must notice, send ABORT for exactly that thread's requests (the engine log
// shows it), and leave the main thread's streams alone.
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { FinishReason } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatRequest,
  connectEngines,
  removeIpcFiles,
  type Setup,
  track,
  withTimeout,
} from "../src/harness.ts";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

let setup: Setup | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
  removeIpcFiles();
});

const MAIN_TOKENS = 1_200; // ~6 s at 5 ms per step: still streaming after the worker's requests are aborted

describe("a terminated worker thread", () => {
  it("its requests are aborted on the engines within a few seconds; the main thread's streams go on", async () => {
    setup = await connectEngines([
      { engineIndices: [0], stepMs: 5 },
      { engineIndices: [1], stepMs: 5 },
    ]);
    const { client, engines } = setup;
    const mainStreams = await Promise.all(
      Array.from({ length: 6 }, (_, i) => track(client, chatRequest(`main-${i}`, MAIN_TOKENS))),
    );
    const workerIds = Array.from({ length: 6 }, (_, i) => `worker-${i}`);
    const worker = new Worker(fixture("streaming-worker.mjs"), {
      workerData: { handle: client.handle, requests: workerIds.map((id) => chatRequest(id, 1_000_000)) },
      execArgv: [], // plain Node resolution to the built packages
    });
    const workerErrors: unknown[] = [];
    worker.on("error", (error) => workerErrors.push(error));
    const streaming = await withTimeout(
      new Promise<{ streaming: string[] }>((resolve) =>
        worker.on("message", (m) => {
          if (m.streaming) resolve(m);
        }),
      ),
      20_000,
      "the worker's streams to start",
    );
    expect(streaming.streaming.sort()).toEqual([...workerIds].sort());
    await Promise.all(mainStreams.map((t) => t.firstOutput));

    const terminatedAt = Date.now();
    await worker.terminate();
    const abortedIds = new Set<string>();
    const isWorkerAbort = (e: { event: string; requestIds?: string[] }) =>
      e.event === "abort" && (e.requestIds ?? []).some((id) => id.startsWith("worker-"));
    // One ABORT per engine that owns some of the worker's requests.
    const owning = engines.filter((engine) =>
      engine.events.some((e) => e.event === "add" && String(e.requestId).startsWith("worker-")),
    );
    const abortEvents = await withTimeout(
      Promise.all(owning.map((engine) => engine.waitForEvent(isWorkerAbort, 10_000))),
      12_000,
      "ABORT of the worker's requests",
    );
    for (const e of abortEvents) for (const id of e.requestIds ?? []) abortedIds.add(id);
    const detection = Math.max(...abortEvents.map((e) => (e.ts as number) - terminatedAt));
    console.log(
      `[reliability] terminated worker: ABORT for its ${abortedIds.size} requests reached ${owning.length} engine(s) ${detection} ms after terminate()`,
    );
    expect([...abortedIds].sort()).toEqual([...workerIds].sort());
    expect(detection).toBeLessThan(5_000);
    expect(workerErrors).toEqual([]);

    // The main thread's streams were still running and complete in full; none of them was aborted.
    const outcomes = await withTimeout(
      Promise.all(mainStreams.map((t) => t.outcome)),
      30_000,
      "main streams",
    );
    const abortedAt = Math.min(...abortEvents.map((e) => e.ts as number));
    for (const o of outcomes) {
      expect(o.error).toBeUndefined();
      expect(o.finishReason).toBe(FinishReason.LENGTH);
      expect(o.tokens).toEqual(
        expectedTokens(o.requestId, chatRequest(o.requestId, MAIN_TOKENS).promptTokenIds, MAIN_TOKENS),
      );
    }
    expect(Date.now() - (performance.now() - Math.min(...outcomes.map((o) => o.endedAt)))).toBeGreaterThan(
      abortedAt,
    );
    for (const engine of engines) {
      const abortedHere = engine.events
        .filter((e) => e.event === "abort")
        .flatMap((e) => (e.requestIds ?? []) as string[]);
      expect(abortedHere.filter((id) => id.startsWith("main-"))).toEqual([]);
    }
    expect(client.isHealthy).toBe(true);
    // The worker's ids are free again on the connection.
    const reused = await track(client, chatRequest("worker-0", 3));
    expect((await reused.outcome).tokens).toHaveLength(3);
  });
});

describe("misuse across threads", () => {
  it("a worker reusing an id live on the main thread gets DuplicateRequestIdError; calls after detach get ClientClosedError", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5 }]);
    const { client, engines } = setup;
    const live = await track(client, chatRequest("shared-id", 200));
    await live.firstOutput;
    const worker = new Worker(fixture("call-once-worker.mjs"), {
      workerData: { handle: client.handle, request: chatRequest("shared-id", 3) },
      execArgv: [],
    });
    // Listened for before the report is awaited: the last message and the exit can come in one turn.
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    const report = await withTimeout(
      new Promise<{
        first: { error?: { name: string; code: string } };
        afterDetach: { error?: { name: string; code: string } };
      }>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      }),
      20_000,
      "the worker's report",
    );
    await exited;
    expect(report.first.error).toMatchObject({
      name: "DuplicateRequestIdError",
      code: "DUPLICATE_REQUEST_ID",
    });
    expect(report.afterDetach.error).toMatchObject({ name: "ClientClosedError", code: "CLIENT_CLOSED" });
    // The main thread's request was not disturbed, and the engine saw exactly one ADD for the id.
    const outcome = await live.outcome;
    expect(outcome.error).toBeUndefined();
    expect(outcome.tokens).toHaveLength(200);
    expect(engines[0]!.events.filter((e) => e.event === "add").map((e) => e.requestId)).toEqual([
      "shared-id",
    ]);
    expect(client.isHealthy).toBe(true);
  });
});
