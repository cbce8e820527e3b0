// readSchedulerStats: the scheduler_stats field of an EngineCoreOutputs decoded alone, equal to what the full
// decoder returns, on every frame shape (Uint8Array, Node Buffers incl. pooled small ones, unaligned views).
import { describe, expect, it } from "vitest";
import {
  type EngineCoreOutputsInit,
  encodeEngineCoreOutputs,
  encodeValue,
  ProtocolError,
  readOutputRoute,
  readSchedulerStats,
} from "../src/index.js";
import { decodeEngineCoreOutputs, FRAME_SHAPES } from "./helpers/frame-shapes.js";

const stats = {
  numRunningReqs: 3,
  numWaitingReqs: 5,
  numSkippedWaitingReqs: 1,
  stepCounter: 9,
  currentWave: 2,
  kvCacheUsage: 0.25,
  prefixCacheStats: {
    reset: false,
    requests: 2,
    queries: 40,
    hits: 16,
    preemptedRequests: 0,
    preemptedQueries: 0,
    preemptedHits: 0,
  },
  connectorPrefixCacheStats: null,
  specDecodingStats: {
    numSpecTokens: 2,
    numDrafts: 4,
    numDraftTokens: 8,
    numAcceptedTokens: 5,
    numAcceptedTokensPerPos: [3, 2],
    numDraftTokensPerPos: [4, 4],
  },
  waitingLoraAdapters: { a: 1 },
};

const message: EngineCoreOutputsInit = {
  engineIndex: 1,
  timestamp: 3.5,
  outputs: Array.from({ length: 50 }, (_, i) => ({
    requestId: `r-${i}`,
    newTokenIds: [i, i + 1],
    finishReason: null,
    kvTransferParams: { nested: [{ deep: i }] },
  })),
  schedulerStats: stats as never,
  finishedRequests: ["r-0"],
};

describe("readSchedulerStats", () => {
  it("decodes scheduler_stats alone, equal to the full decode, on every frame shape", () => {
    const frames = encodeEngineCoreOutputs(message);
    const full = decodeEngineCoreOutputs(frames).schedulerStats;
    expect(full?.numWaitingReqs).toBe(5);
    for (const shape of FRAME_SHAPES) {
      const [main] = shape.make([frames[0]!]);
      expect(readSchedulerStats(main!), shape.name).toEqual(full);
      // From the span the routing read recorded: the same value, without a second walk.
      const route = readOutputRoute(main!);
      expect(route.schedulerStatsSpan, shape.name).not.toBeNull();
      expect(readSchedulerStats(main!, route), shape.name).toEqual(full);
    }
  });

  it("is null without stats, for an empty or non-array frame", () => {
    const frames = encodeEngineCoreOutputs({ ...message, schedulerStats: null });
    for (const shape of FRAME_SHAPES) {
      const [main] = shape.make([frames[0]!]);
      expect(readSchedulerStats(main!), shape.name).toBeNull();
      const route = readOutputRoute(main!);
      expect(route.schedulerStatsSpan, shape.name).toBeNull();
      expect(readSchedulerStats(main!, route), shape.name).toBeNull();
    }
    expect(readSchedulerStats(new Uint8Array())).toBeNull();
    expect(readSchedulerStats(Uint8Array.of(0x81, 0xa1, 0x61, 0x01))).toBeNull();
    // Truncated before the stats: the walk stops, nothing is decoded.
    expect(readSchedulerStats(encodeEngineCoreOutputs(message)[0]!.subarray(0, 20))).toBeNull();
  });

  it("throws the decoder's ProtocolError for stats that do not decode", () => {
    const bad = encodeValue([0, [], { num_running_reqs: "x" }, 0.5, null, null, null, null]);
    for (const shape of FRAME_SHAPES) {
      const [main] = shape.make([bad]);
      expect(() => readSchedulerStats(main!), shape.name).toThrow(ProtocolError);
      expect(() => readSchedulerStats(main!, readOutputRoute(main!)), shape.name).toThrow(ProtocolError);
    }
  });
});
