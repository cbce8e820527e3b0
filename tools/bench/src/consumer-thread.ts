// Main-thread side of the bench's consumer worker: typed waits for its messages (the probe's mailbox),
// with "phase" messages handed to `onPhase` as they arrive instead of queued.
import { Worker } from "node:worker_threads";
import { WorkerMailbox } from "@vllm-engine-core/probe";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";

export class ConsumerThread extends WorkerMailbox<FromConsumer, ToConsumer> {
  /** Called for every "phase" message as it arrives (CPU sampling at window edges). */
  onPhase: (phase: string) => void = () => undefined;

  constructor() {
    super(new Worker(new URL("./consumer-worker.js", import.meta.url)), (m) => {
      if (m.type !== "phase") return false;
      this.onPhase(m.phase);
      return true;
    });
  }
}
