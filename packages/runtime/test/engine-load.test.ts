// The engine-choice rules of engine-load.ts against the vLLM code they follow.
import { describe, expect, it } from "vitest";
import {
  type EngineLoadView,
  leastLoaded,
  PublishedCountsBalancer,
  routingScore,
} from "../src/runtime-thread/engine-load.js";

const engine = (
  index: number,
  inflight = 0,
  reported?: { running: number; waiting: number },
): EngineLoadView => ({
  index,
  inflight,
  dead: undefined,
  reported,
});

describe("routingScore / leastLoaded (Rust EngineRoutingState::routing_score)", () => {
  it("uses in-flight before stats, and stats never lower it below in-flight", () => {
    expect(routingScore(engine(0, 3))).toBe(3);
    expect(routingScore(engine(0, 7, { running: 2, waiting: 0 }))).toBe(7);
    expect(routingScore(engine(0, 1, { running: 2, waiting: 3 }))).toBe(5);
  });

  it("picks the lowest score, the first engine on ties, never a dead one", () => {
    expect(leastLoaded([engine(0, 1), engine(1, 1)])?.index).toBe(0);
    expect(leastLoaded([engine(0, 0, { running: 0, waiting: 4 }), engine(1, 2)])?.index).toBe(1);
    expect(leastLoaded([{ ...engine(0), dead: new Error("x") }, engine(1, 9)])?.index).toBe(1);
  });
});

describe("PublishedCountsBalancer (Python DPLBAsyncMPClient.get_core_engine_for_request)", () => {
  it("rotates its start index so that idle engines are taken in turn", () => {
    const engines = [engine(0), engine(1), engine(2)];
    const b = new PublishedCountsBalancer(3, 0);
    const counts = [
      [0, 0],
      [0, 0],
      [0, 0],
    ] as [number, number][];
    // The local bump makes the picked engine look busier until the next publish.
    expect([0, 1, 2].map(() => b.pick(engines, counts)?.index)).toEqual([0, 1, 2]);
  });

  it("starts frontends apart (client index) and reads counts by DP rank", () => {
    const engines = [engine(4), engine(5)];
    const counts: [number, number][] = [
      [9, 9],
      [9, 9],
      [9, 9],
      [9, 9],
      [0, 0],
      [0, 0],
    ];
    expect(new PublishedCountsBalancer(2, 1).pick(engines, counts)?.index).toBe(5);
    expect(new PublishedCountsBalancer(2, 0).pick(engines, counts)?.index).toBe(4);
  });

  it("scores max(inFlight, waiting + running) plus the KV-pressure penalty on waiting requests", () => {
    const b = new PublishedCountsBalancer(2, 0);
    // Engine 0: 2 waiting at 100% KV usage → 2 + 2 * 6 * 0.5 = 8; engine 1: 5 running → 5.
    expect(
      b.pick(
        [engine(0), engine(1)],
        [
          [2, 0, 1.0],
          [0, 5, 1.0],
        ],
      )?.index,
    ).toBe(1);
    // Without the penalty (≤ 50% usage) engine 0's 2 < 5.
    expect(
      new PublishedCountsBalancer(2, 0).pick(
        [engine(0), engine(1)],
        [
          [2, 0, 0.5],
          [0, 5, 0.5],
        ],
      )?.index,
    ).toBe(0);
    expect(
      new PublishedCountsBalancer(2, 0).pick(
        [engine(0, 9), engine(1)],
        [
          [0, 0],
          [0, 5],
        ],
      )?.index,
    ).toBe(1);
  });

  it("before any publish, picks on zero counts (DPAsyncMPClient's initial lb_engines), bumps included", () => {
    const engines = [engine(4), engine(5)];
    const b = new PublishedCountsBalancer(2, 0);
    expect([null, undefined, null].map((none) => b.pick(engines, none)?.index)).toEqual([4, 5, 4]);
    // The first publish replaces the zeros and their bumps.
    const published: [number, number][] = [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [3, 0],
      [0, 0],
    ];
    expect(b.pick(engines, published)?.index).toBe(5);
  });

  it("falls back (undefined) when the counts do not cover the engines", () => {
    expect(new PublishedCountsBalancer(2, 0).pick([engine(0), engine(3)], [[0, 0]])).toBeUndefined();
  });
});
