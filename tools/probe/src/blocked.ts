// The delay experiment: streams run, the connecting thread blocks, and every output the engine sent while
// it was blocked is measured from engine send to consumer receive.
import { setTimeout as sleep } from "node:timers/promises";
import { type BlockMode, blockFor } from "./block.js";
import { monotonicNowMs } from "./clock.js";
import { delaysSentWithin } from "./delays.js";
import { type Summary, summarize } from "./stats.js";

/** Something that runs streams and records (send time, delay) pairs for every output it consumes. */
export interface StreamingSession {
  /** Starts `count` streams; resolves once outputs are flowing. */
  start(count: number, maxTokens: number, prefix: string): Promise<void>;
  /** Ends the streams and returns the recorded [sent, delay, …] pairs. */
  stop(): Promise<{ pairs: Float64Array; merged: number }>;
}

export interface BlockedDelayResult {
  mode: BlockMode;
  /** How long the connecting thread was actually blocked. */
  blockedMs: number;
  /** Delays (ms) of the outputs the engine sent during the block. */
  delay: Summary;
  /** Outputs received in total during the run (all streams). */
  outputsTotal: number;
  /** Outputs that arrived merged with earlier unread ones (consumer fell behind). */
  merged: number;
}

export interface BlockedRunOptions {
  mode: BlockMode;
  blockMs: number;
  streams: number;
  stepMs: number;
  warmupMs?: number;
  tailMs?: number;
  prefix: string;
}

export async function measureBlockedDelay(
  session: StreamingSession,
  o: BlockedRunOptions,
): Promise<BlockedDelayResult> {
  const warmupMs = o.warmupMs ?? 500;
  const tailMs = o.tailMs ?? 750;
  // Enough tokens to outlast warm-up, block and tail even if steps run twice as fast as asked.
  const maxTokens = Math.ceil(((warmupMs + o.blockMs + tailMs + 5_000) / Math.max(1, o.stepMs)) * 2) + 100;
  await session.start(o.streams, maxTokens, o.prefix);
  await sleep(warmupMs);
  const start = monotonicNowMs();
  await blockFor(o.mode, o.blockMs);
  const end = monotonicNowMs();
  await sleep(tailMs);
  const { pairs, merged } = await session.stop();
  return {
    mode: o.mode,
    blockedMs: end - start,
    delay: summarize(delaysSentWithin(pairs, start, end)),
    outputsTotal: pairs.length / 2,
    merged,
  };
}
