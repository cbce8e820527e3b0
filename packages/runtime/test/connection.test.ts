// One thread, real runtime worker, real mock engines: connect, stream, route, abort, utilities.

import {
  ClientClosedError,
  DuplicateRequestIdError,
  EngineDeadError,
  InvalidDataParallelRankError,
} from "@vllm-engine-core/errors";
import { expectedTokens, type MockEngineProcess } from "@vllm-engine-core/mock-engine";
import { FinishReason, Float64 } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { openConnection, type RuntimeConnection } from "../src/index.ts";
import {
  collector,
  ipcAddress,
  PROMPT,
  request,
  sleep,
  startEngines,
  stopAll,
  withTimeout,
} from "./helpers.ts";

let engines: MockEngineProcess[] = [];
let connection: RuntimeConnection | undefined;

afterEach(async () => {
  await connection?.shutdown();
  connection = undefined;
  await stopAll(engines);
  engines = [];
});

async function connect(engineCount: number, options: { stepMs?: number } = {}): Promise<RuntimeConnection> {
  const handshakeAddress = ipcAddress("hs");
  const engineIndices = Array.from({ length: engineCount }, (_, i) => i);
  engines = await startEngines(handshakeAddress, [{ engineIndices, stepMs: options.stepMs ?? 2 }]);
  connection = await openConnection({
    transport: { mode: "handshake-owner", handshakeAddress, engineCount, readyTimeoutMs: 20_000 },
    modelName: "mock-model",
    clientIndex: 0,
  });
  return connection;
}

describe("connection on one thread", () => {
  it("connects to one engine and streams a request to its final output", async () => {
    const conn = await connect(1);
    expect(conn.info.engines.map((e) => e.index)).toEqual([0]);
    expect(conn.info.inputAddress).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(conn.info.modelName).toBe("mock-model");
    expect(conn.handle).toEqual({ connectionId: expect.stringContaining(":"), __vllmConnectionHandle: 1 });
    expect(structuredClone(conn.handle)).toEqual(conn.handle);

    const { sink, done } = collector();
    expect(await conn.submit(request("one", 6), sink)).toEqual({ engineIndex: 0 });
    const result = await withTimeout(done, 10_000, "stream");
    expect(result.error).toBeUndefined();
    expect(result.tokens).toEqual(expectedTokens("one", PROMPT, 6));
    expect(result.finishReason).toBe(FinishReason.LENGTH);
    expect(result.batches.every((b) => b.size === 1 && b.engineIndex === 0)).toBe(true);
    expect(conn.healthError).toBeUndefined();
  });

  it("spreads requests over four engines by least in-flight, ties to the lowest identity", async () => {
    const conn = await connect(4, { stepMs: 20 });
    expect(conn.info.engines.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    const streams = Array.from({ length: 8 }, (_, i) => ({ id: `r${i}`, ...collector() }));
    const chosen: number[] = [];
    for (const s of streams) chosen.push((await conn.submit(request(s.id, 200), s.sink)).engineIndex);
    expect(chosen).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);

    // Every ADD reached the engine it was routed to.
    for (let i = 0; i < streams.length; i++) {
      await engines[0]!.waitForEvent((e) => e.event === "add" && e.requestId === `r${i}`, 10_000);
      expect(engines[0]!.events.find((e) => e.event === "add" && e.requestId === `r${i}`)?.engineIndex).toBe(
        chosen[i],
      );
    }
    // Finishing frees engine 2 only: the next request goes there.
    expect(await conn.abort(["r2", "r6"])).toEqual(["r2", "r6"]);
    const next = collector();
    expect((await conn.submit(request("after", 3), next.sink)).engineIndex).toBe(2);
    const result = await withTimeout(next.done, 10_000, "stream on engine 2");
    expect(result.tokens).toEqual(expectedTokens("after", PROMPT, 3));
    await conn.abort(streams.map((s) => s.id));
  });

  it("routes an explicit dataParallelRank and rejects an unknown one", async () => {
    const conn = await connect(4);
    const pinned = collector();
    expect((await conn.submit(request("pinned", 3, { dataParallelRank: 3 }), pinned.sink)).engineIndex).toBe(
      3,
    );
    expect((await withTimeout(pinned.done, 10_000, "pinned")).batches.every((b) => b.engineIndex === 3)).toBe(
      true,
    );

    const bad = collector();
    const error = await conn
      .submit(request("bad-rank", 3, { dataParallelRank: 7 }), bad.sink)
      .catch((e) => e);
    expect(error).toBeInstanceOf(InvalidDataParallelRankError);
    expect(error).toMatchObject({ code: "INVALID_DATA_PARALLEL_RANK", rank: 7, engineIndices: [0, 1, 2, 3] });
    // Rolled back: the id is free again.
    const again = collector();
    await conn.submit(request("bad-rank", 2), again.sink);
    expect((await withTimeout(again.done, 10_000, "retry")).tokens).toHaveLength(2);
  });

  it("rejects a duplicate live request id and accepts it again once finished", async () => {
    const conn = await connect(1, { stepMs: 20 });
    const first = collector();
    await conn.submit(request("dup", 4), first.sink);
    const second = collector();
    await expect(conn.submit(request("dup", 4), second.sink)).rejects.toBeInstanceOf(DuplicateRequestIdError);
    await withTimeout(first.done, 10_000, "first");
    const third = collector();
    await conn.submit(request("dup", 2), third.sink);
    expect((await withTimeout(third.done, 10_000, "third")).tokens).toEqual(expectedTokens("dup", PROMPT, 2));
    // The failed duplicate never touched the first stream.
    expect(first.result.tokens).toEqual(expectedTokens("dup", PROMPT, 4));
    expect(second.result.outputs).toHaveLength(0);
  });

  it("aborts live requests: ABORT reaches the engine, notify ends the stream with finishReason ABORT", async () => {
    const conn = await connect(2, { stepMs: 10 });
    const a = collector();
    const b = collector();
    await conn.submit(request("ab-a", 100_000), a.sink);
    await conn.submit(request("ab-b", 100_000), b.sink);
    await withTimeout(
      (async () => {
        while (a.result.outputs.length === 0 || b.result.outputs.length === 0) await sleep(5);
      })(),
      10_000,
      "first outputs",
    );
    expect(await conn.abort(["ab-a", "ab-b", "unknown"])).toEqual(["ab-a", "ab-b"]);
    const [ra, rb] = await Promise.all([withTimeout(a.done, 5_000, "a"), withTimeout(b.done, 5_000, "b")]);
    expect(ra.finishReason).toBe(FinishReason.ABORT);
    expect(rb.finishReason).toBe(FinishReason.ABORT);
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("ab-a"),
      5_000,
    );
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("ab-b"),
      5_000,
    );
    // The sink ends with `aborted` before abort() returns, and gets nothing after it.
    const c = collector();
    await conn.submit(request("ab-c", 100_000), c.sink);
    const aborting = conn.abort(["ab-c"]);
    expect(c.result.aborted).toBe(0);
    expect(await aborting).toEqual(["ab-c"]);
    const seen = c.result.outputs.length;
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("ab-c"),
      5_000,
    );
    expect(c.result.outputs.length).toBe(seen);
    expect(c.result.error).toBeUndefined();
    expect(await conn.abort(["ab-c"])).toEqual([]);
  });

  it("a request that reuses an aborted request's slot gets none of the outputs still on their way to it", async () => {
    // Forwarded frames name this thread's requests by slot, and a slot is reused as soon as its request ends
    // here (abort is local at once; the runtime still routes the old request until it sees the ABORT).
    const conn = await connect(1, { stepMs: 1 });
    for (let round = 0; round < 5; round++) {
      const old = Array.from({ length: 64 }, (_, i) => ({ id: `old-${round}-${i}`, stream: collector() }));
      for (const o of old) await conn.submit(request(o.id, 100_000), o.stream.sink);
      await withTimeout(
        (async () => {
          while (old.some((o) => o.stream.result.outputs.length < 3)) await sleep(2);
        })(),
        10_000,
        "outputs of the old requests",
      );
      // Frames of the old requests pile up in this thread's inbox while it is busy; they are handled after
      // the abort and the new submits below, which run in one go.
      const busyUntil = performance.now() + 30;
      while (performance.now() < busyUntil) {
        // busy
      }
      const aborting = conn.abort(old.map((o) => o.id));
      // Submitted before the runtime has handled the abort: these take the slots just freed.
      const fresh = Array.from({ length: 64 }, (_, i) => ({ id: `new-${round}-${i}`, stream: collector() }));
      const submits = fresh.map((f) => conn.submit(request(f.id, 20), f.stream.sink));
      await aborting;
      await Promise.all(submits);
      for (const f of fresh) {
        const { outputs, finishReason } = await withTimeout(f.stream.done, 10_000, f.id);
        expect(finishReason).toBe(FinishReason.LENGTH);
        expect(outputs.filter((o) => o.requestId !== f.id).map((o) => o.requestId)).toEqual([]);
        expect(outputs.flatMap((o) => o.newTokenIds)).toHaveLength(20);
      }
    }
  });

  it("calls a utility on every engine with one call id per engine", async () => {
    const conn = await connect(4);
    const replies = await conn.callUtility("engine_index", []);
    expect(replies.map((r) => r.engineIndex)).toEqual([0, 1, 2, 3]);
    expect(replies.map((r) => r.output.result?.value)).toEqual([0, 1, 2, 3]);
    expect(replies.map((r) => r.output.callId)).toEqual([1n, 2n, 3n, 4n]);
    const echo = await conn.callUtility("echo", ["x", 2, new Float64(3), { k: [1, null] }]);
    expect(echo.map((r) => r.output.callId)).toEqual([5n, 6n, 7n, 8n]);
    for (const reply of echo) {
      const value = reply.output.result?.value as unknown[];
      expect(value).toEqual(["x", 2, new Float64(3), { k: [1, null] }]);
      // The float survives both thread crossings as a Float64 (it re-encodes as a msgpack float).
      expect(value[2]).toBeInstanceOf(Float64);
    }
    await engines[0]!.waitForEvent((e) => e.event === "utility" && e.method === "echo", 5_000);
    const failed = await conn.callUtility("no_such_method", []);
    expect(failed.every((r) => typeof r.output.failureMessage === "string")).toBe(true);
  });

  it("an engine that dies fails only its own requests; the other engine keeps serving", async () => {
    const handshakeAddress = ipcAddress("dead");
    engines = await startEngines(handshakeAddress, [
      { engineIndices: [0], stepMs: 5 },
      { engineIndices: [1], stepMs: 5, faults: { crashAfterSteps: 20 } },
    ]);
    connection = await openConnection({
      transport: { mode: "handshake-owner", handshakeAddress, engineCount: 2, readyTimeoutMs: 20_000 },
    });
    const conn = connection;
    const health: Error[] = [];
    conn.onHealthChange((e) => health.push(e));
    const survivor = collector();
    const victim = collector();
    await conn.submit(request("on-0", 150, { dataParallelRank: 0 }), survivor.sink);
    await conn.submit(request("on-1", 100_000, { dataParallelRank: 1 }), victim.sink);

    const failed = await withTimeout(victim.done, 15_000, "victim failure");
    expect(failed.error).toBeInstanceOf(EngineDeadError);
    expect(failed.error).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 1 });
    expect(conn.healthError).toBe(health[0]);
    expect(health).toHaveLength(1);
    expect(health[0]).toBeInstanceOf(EngineDeadError);

    const done = await withTimeout(survivor.done, 15_000, "survivor");
    expect(done.error).toBeUndefined();
    expect(done.tokens).toEqual(expectedTokens("on-0", PROMPT, 150));
    await expect(
      conn.submit(request("to-dead", 1, { dataParallelRank: 1 }), collector().sink),
    ).rejects.toBeInstanceOf(EngineDeadError);
    const rerouted = collector();
    expect((await conn.submit(request("rerouted", 2), rerouted.sink)).engineIndex).toBe(0);
    expect((await withTimeout(rerouted.done, 10_000, "rerouted")).tokens).toHaveLength(2);
    await expect(conn.callUtility("engine_index", [])).rejects.toBeInstanceOf(EngineDeadError);
  });

  it("ENGINE_CORE_DEAD from the only engine fails its requests with EngineDeadError", async () => {
    const handshakeAddress = ipcAddress("sentinel");
    engines = await startEngines(handshakeAddress, [
      { engineIndices: [0], stepMs: 5, faults: { deadSentinelAfterSteps: 10 } },
    ]);
    connection = await openConnection({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    const victim = collector();
    await connection.submit(request("sentinel", 100_000), victim.sink);
    const failed = await withTimeout(victim.done, 15_000, "failure");
    expect(failed.error).toMatchObject({ name: "EngineDeadError", engineIndex: 0 });
    expect(connection.healthError).toMatchObject({ name: "EngineDeadError", engineIndex: 0 });
  });

  it("shutdown fails live streams with ClientClosedError and closes the connection", async () => {
    const conn = await connect(1, { stepMs: 10 });
    const live = collector();
    await conn.submit(request("live", 100_000), live.sink);
    const health: Error[] = [];
    conn.onHealthChange((e) => health.push(e));
    await conn.shutdown();
    connection = undefined;
    const result = await withTimeout(live.done, 5_000, "failed stream");
    expect(result.error).toBeInstanceOf(ClientClosedError);
    expect(conn.healthError).toBeInstanceOf(ClientClosedError);
    expect(health).toHaveLength(1);
    await expect(conn.submit(request("late", 1), collector().sink)).rejects.toBeInstanceOf(ClientClosedError);
    await conn.shutdown(); // idempotent
  });
});
