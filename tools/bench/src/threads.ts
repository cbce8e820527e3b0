// Names the threads of this process for CPU reports: the main (calling) thread, the consumer thread,
// the runtime thread (found like the probe does: the unmarked Node loop that watches ZeroMQ signalers)
// and libzmq's threads.
import { setTimeout as sleep } from "node:timers/promises";
import {
  analyzeDescriptors,
  procfsAvailable,
  readProcSnapshot,
  type ThreadMarker,
} from "@vllm-engine-core/probe";

export async function labelThreads(markers: ThreadMarker[], attempts = 60): Promise<Map<number, string>> {
  const labels = new Map<number, string>([[process.pid, "main thread"]]);
  if (!procfsAvailable()) return labels;
  const wanted = markers.length + 1; // + the runtime thread
  for (let i = 0; i < attempts; i++) {
    const snapshot = readProcSnapshot();
    for (const loop of analyzeDescriptors(snapshot, markers, []).loops) {
      if (loop.tid === undefined) continue;
      if (loop.marked || loop.label === "runtime thread") labels.set(loop.tid, loop.label);
    }
    for (const t of snapshot.threads) if (t.name.startsWith("ZMQbg")) labels.set(t.tid, `libzmq ${t.name}`);
    const found = [...labels.values()].filter((l) => !l.startsWith("libzmq") && l !== "main thread").length;
    if (found >= wanted) break;
    await sleep(10);
  }
  return labels;
}
