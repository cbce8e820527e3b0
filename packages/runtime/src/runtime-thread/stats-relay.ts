// Scheduler stats to every thread of a connection. vLLM attaches an engine's SchedulerStats to one
// client's output batch per step (Scheduler.update_from_output, "Return stats to only one of the
// front-ends"), with or without request outputs; here every attached thread gets them, as a small message
// of their own, whoever owns the outputs of that batch. Once per engine step, so the cost is per step, not
// per output.
import type { SchedulerStats } from "@vllm-engine-core/protocol";
import { packArgs } from "../messages.js";
import type { ThreadPeer } from "./peer.js";

export function relaySchedulerStats(
  peers: Iterable<ThreadPeer>,
  connectionId: string,
  engineIndex: number,
  stats: SchedulerStats,
): void {
  // The opaque sub-structures (kv_connector_stats, perf_stats, ...) may hold Float64/MsgpackExt.
  const packed = packArgs(stats) as SchedulerStats;
  for (const peer of peers) peer.post({ t: "stats", c: connectionId, engineIndex, stats: packed });
}
