// Where a step's scheduler stats go (src/runtime-thread/output-router.ts): with the frames to the threads that
// own its outputs (they decode the stats there), to the connection once for the others, and once only when
// nobody owns the step (the message is then consumed on the runtime thread, which hands its stats on).
// End to end, over a real mock engine and two threads: packages/client/test/observability.test.ts.
import {
  type EngineCoreOutputs,
  type EngineCoreOutputsInit,
  encodeEngineCoreOutputs,
  readOutputRoute,
  type SchedulerStats,
} from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { OutputDiagnostics } from "../src/runtime-thread/diagnostics.ts";
import type { EngineState } from "../src/runtime-thread/engines.ts";
import type { ThreadLane } from "../src/runtime-thread/lane.ts";
import { LiveRequests } from "../src/runtime-thread/live-requests.ts";
import { OutputRouter, type RoutedConnection } from "../src/runtime-thread/output-router.ts";

/** A lane that records what the runtime posts to it. */
function lane(): ThreadLane & { posts: { t: string }[] } {
  const posts: { t: string }[] = [];
  return { posts, post: (message: { t: string }) => posts.push(message) } as never;
}

function connection() {
  const calls = {
    consumed: [] as EngineCoreOutputs[],
    stats: [] as { engineIndex: number; stats: SchedulerStats; informed: ThreadLane[] | undefined }[],
  };
  const requests = new LiveRequests();
  const routed: RoutedConnection = {
    requests,
    diag: new OutputDiagnostics(),
    consume: (outputs) => calls.consumed.push(outputs),
    onSchedulerStats: (engineIndex, stats, informed) =>
      calls.stats.push({ engineIndex, stats, informed: informed && [...informed] }),
    onBadMessage: (error) => {
      throw error;
    },
  };
  return { calls, requests, router: new OutputRouter(routed) };
}

const engine = (): EngineState => ({ index: 1, inflight: 0, dead: undefined });

/** One step of engine 1 with stats, its outputs naming `ids`. */
function route(router: OutputRouter, ids: string[]): void {
  const step: EngineCoreOutputsInit = {
    engineIndex: 1,
    outputs: ids.map((requestId) => ({ requestId, newTokenIds: [7], finishReason: null })),
    schedulerStats: { numRunningReqs: ids.length, prefixCacheStats: { queries: 4 } } as never,
  };
  const frames = encodeEngineCoreOutputs(step).map((f) => Buffer.from(f));
  router.route(readOutputRoute(frames[0]!), frames, [1]);
}

describe("OutputRouter: a step's scheduler stats", () => {
  it("go inside the frames to the one owner thread, and to the connection once, naming that thread", () => {
    const { calls, requests, router } = connection();
    const owner = lane();
    requests.add("a", owner, 0, engine());
    requests.add("b", owner, 1, engine());
    route(router, ["a", "b"]);
    expect(owner.posts.map((p) => p.t)).toEqual(["frames"]);
    expect(calls.consumed).toEqual([]);
    expect(calls.stats).toHaveLength(1);
    expect(calls.stats[0]).toMatchObject({ engineIndex: 1, stats: { numRunningReqs: 2 }, informed: [owner] });
  });

  it("name every thread that got the frames when several own outputs of the step", () => {
    const { calls, requests, router } = connection();
    const [one, two, idle] = [lane(), lane(), lane()];
    requests.add("a", one, 0, engine());
    requests.add("b", two, 0, engine());
    requests.add("c", idle, 0, engine());
    route(router, ["a", "b"]);
    expect([one, two, idle].map((l) => l.posts.length)).toEqual([1, 1, 0]);
    expect(calls.stats).toHaveLength(1);
    expect(new Set(calls.stats[0]!.informed)).toEqual(new Set([one, two]));
  });

  it("are handed on once when no live request owns the step (consumed on the runtime thread)", () => {
    const { calls, router } = connection();
    route(router, ["gone"]);
    // consume() is what hands a consumed message's stats on (ConnectionService.consume): not a second time.
    expect(calls.consumed).toHaveLength(1);
    expect(calls.consumed[0]!.schedulerStats).toMatchObject({ numRunningReqs: 1 });
    expect(calls.stats).toEqual([]);
  });
});
