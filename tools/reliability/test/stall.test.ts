// Priority 2: an engine stalls for 10 s mid-stream (the mock stops stepping but keeps its sockets and
// keeps reading input). Nothing must be reported as an error, nothing may be lost, and tokens must arrive
// in order once it resumes; the other engine keeps streaming meanwhile.
import { FinishReason } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatRequest,
  connectEngines,
  removeIpcFiles,
  type Setup,
  sleep,
  track,
  withTimeout,
} from "../src/harness.ts";

let setup: Setup | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
  removeIpcFiles();
});

const STALL_MS = 10_000;
const TOKENS = 40;

describe("engine stall", () => {
  it(`a ${STALL_MS / 1000} s stall of engine 0: no spurious error, nothing lost, tokens in order`, async () => {
    setup = await connectEngines([
      { engineIndices: [0], stepMs: 5, faults: { stallAfterSteps: 10, stallMs: STALL_MS } },
      { engineIndices: [1], stepMs: 5 },
    ]);
    const { client, engines } = setup;
    const healthChanges: Error[] = [];
    client.onHealthChange((error) => healthChanges.push(error));
    const stalled = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        track(client, { ...chatRequest(`stalled-${i}`, TOKENS), dataParallelRank: 0 }),
      ),
    );
    const stallEvent = await engines[0]!.waitForEvent((e) => e.event === "fault" && e.kind === "stall");
    const stallSeenAt = performance.now();
    // During the stall: the other engine serves new requests in full, a new request for the stalled
    // engine is accepted, a utility call is answered (the mock reads input while stalled), health is fine.
    const during = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        track(client, { ...chatRequest(`during-${i}`, TOKENS), dataParallelRank: 1 }),
      ),
    );
    const queued = await track(client, { ...chatRequest("queued-on-stalled", TOKENS), dataParallelRank: 0 });
    const duringOutcomes = await withTimeout(
      Promise.all(during.map((t) => t.outcome)),
      5_000,
      "the other engine's streams during the stall",
    );
    const engineIndexReply = await client.callUtility<number>("engine_index");
    expect(engineIndexReply).toEqual([0, 1]);
    await sleep(2_000);
    expect(client.isHealthy).toBe(true);

    const outcomes = await withTimeout(
      Promise.all([...stalled, queued].map((t) => t.outcome)),
      STALL_MS + 10_000,
      "streams of the stalled engine",
    );
    const resumedAt = Math.min(...outcomes.map((o) => o.endedAt));
    const maxGap = Math.max(...stalled.map((_, i) => outcomes[i]!.maxGapMs));
    console.log(
      `[reliability] stall: engine 0 stalled at step ${stallEvent.step} for ${STALL_MS} ms; longest gap between outputs ${maxGap.toFixed(0)} ms; the other engine's 8 streams finished ${(Math.max(...duringOutcomes.map((o) => o.endedAt)) - stallSeenAt).toFixed(0)} ms into the stall; first stalled stream finished ${(resumedAt - stallSeenAt).toFixed(0)} ms after the stall began`,
    );
    for (const o of [...outcomes, ...duringOutcomes]) {
      expect(o.error).toBeUndefined();
      expect(o.finishReason).toBe(FinishReason.LENGTH);
      expect(o.finalOutputs).toBe(1);
      expect(o.afterFinal).toBe(0);
      expect(o.tokens).toEqual(
        expectedTokens(o.requestId, chatRequest(o.requestId, TOKENS).promptTokenIds, TOKENS),
      );
    }
    // The stall really happened mid-stream (a gap of about STALL_MS), and the other engine was not held up.
    expect(maxGap).toBeGreaterThan(STALL_MS * 0.8);
    expect(Math.max(...duringOutcomes.map((o) => o.endedAt))).toBeLessThan(resumedAt);
    expect(healthChanges).toEqual([]);
    expect(client.healthError).toBeUndefined();
    expect(engines[0]!.events.filter((e) => e.event === "abort")).toEqual([]);
    // The client keeps working after the stall.
    const after = await track(client, chatRequest("after-stall", 3));
    expect((await after.outcome).tokens).toHaveLength(3);
  });
});

describe("consumer stall", () => {
  it("the main thread busy-blocked for 3 s mid-stream: nothing lost, no error, tokens in order", async () => {
    setup = await connectEngines([{ engineIndices: [0, 1], stepMs: 2 }]);
    const { client } = setup;
    const streams = await Promise.all(
      Array.from({ length: 16 }, (_, i) => track(client, chatRequest(`blocked-${i}`, 2_000))),
    );
    await Promise.all(streams.map((t) => t.firstOutput));
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      // Busy: no event loop turn for 3 s while the engines keep producing (~1,500 steps each).
    }
    const outcomes = await withTimeout(Promise.all(streams.map((t) => t.outcome)), 20_000, "streams");
    for (const o of outcomes) {
      expect(o.error).toBeUndefined();
      expect(o.finishReason).toBe(FinishReason.LENGTH);
      expect(o.tokens).toEqual(
        expectedTokens(o.requestId, chatRequest(o.requestId, 2_000).promptTokenIds, 2_000),
      );
    }
    expect(client.isHealthy).toBe(true);
  });
});
