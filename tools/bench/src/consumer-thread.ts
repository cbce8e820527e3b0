// Main-thread side of the bench's consumer worker (consumer-worker.ts): the probe's consumer thread, with
// "phase" messages handed to `onPhase` as they arrive instead of queued.
import { ConsumerThread } from "@vllm-engine-core/probe";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";

export class BenchConsumerThread extends ConsumerThread<FromConsumer, ToConsumer> {
  /** Called for every "phase" message as it arrives (CPU sampling at window edges). */
  onPhase: (phase: string) => void = () => undefined;

  constructor() {
    super(new URL("./consumer-worker.js", import.meta.url), {
      intercept: (m) => {
        if (m.type !== "phase") return false;
        this.onPhase((m as Extract<FromConsumer, { type: "phase" }>).phase);
        return true;
      },
    });
  }
}
