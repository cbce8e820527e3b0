// Stats-aware data-parallel routing: without a pinned dataParallelRank the runtime picks the
// engine with the lowest max(inFlight, running + waiting) from its latest SchedulerStats, as vLLM's Rust
// client does (rust/src/engine-core-client/src/client/state.rs). Two mock engines in a child process; engine
// 1 reports load that other frontends put on it (--extra-waiting), which clears after a while.
import { afterEach, describe, expect, it } from "vitest";
import { chatRequest, collect, connectToMockEngine, type Harness } from "./helpers.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("data-parallel routing on the engines' reported load", () => {
  it("sends unpinned requests away from the loaded engine, and back once its load clears", async () => {
    harness = await connectToMockEngine({
      engineCount: 2,
      logStats: true,
      stepMs: 5,
      extraWaiting: 50,
      extraWaitingMs: 4_000,
      extraWaitingEngines: [1],
    });
    const { client } = harness;
    await until(() => client.schedulerStats(1)?.numWaitingReqs === 50, "engine 1's load");
    // In-flight alone would alternate 0, 1, 0, 1, …; engine 1's 50 waiting requests outweigh them all.
    const loaded = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.call(chatRequest(`busy-${i}`, 20))),
    );
    expect(loaded.map((s) => s.engineIndex)).toEqual(new Array(8).fill(0));
    await Promise.all(loaded.map((s) => collect(s)));
    await until(() => client.schedulerStats(1)?.numWaitingReqs === 0, "engine 1's load to clear");
    const cleared = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.call(chatRequest(`free-${i}`, 20))),
    );
    const onEngine1 = cleared.filter((s) => s.engineIndex === 1).length;
    expect(onEngine1).toBeGreaterThanOrEqual(3);
    await Promise.all(cleared.map((s) => collect(s)));
  });

  it("a pinned dataParallelRank still goes to its engine, loaded or not", async () => {
    harness = await connectToMockEngine({
      engineCount: 2,
      logStats: true,
      stepMs: 5,
      extraWaiting: 50,
      extraWaitingEngines: [1],
    });
    const { client } = harness;
    await until(() => client.schedulerStats(1)?.numWaitingReqs === 50, "engine 1's load");
    const stream = await client.call({ ...chatRequest("pinned", 3), dataParallelRank: 1 });
    expect(stream.engineIndex).toBe(1);
    await collect(stream);
  });
});
