// "After": the product. The connecting thread calls EngineCoreClient.connect() (all sockets on the runtime
// worker), a third thread attaches with the handle and consumes; the connecting thread is then blocked.
import { setTimeout as sleep } from "node:timers/promises";
import type { PhaseOptions, PhaseResult } from "./before.js";
import { CONNECTING_LABEL } from "./before.js";
import { type BlockedDelayResult, measureBlockedDelay, type StreamingSession } from "./blocked.js";
import { type AttachedConsumer, ConsumerThread, withAttachedConsumer } from "./consumer/thread.js";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";
import { startProbeEngine } from "./engine.js";
import { freeTcpPort } from "./net.js";
import { analyzeDescriptors, baselineEventfdsOf, type ThreadMarker } from "./procfs/analyze.js";
import { type DescriptorPhase, describePhase } from "./procfs/phase.js";
import { readProcSnapshot } from "./procfs/snapshot.js";

export const CONSUMER_LABEL = "consumer thread";

class WorkerSession implements StreamingSession {
  constructor(readonly consumer: ConsumerThread<FromConsumer, ToConsumer>) {}

  async start(count: number, maxTokens: number, prefix: string): Promise<void> {
    this.consumer.send({ type: "start", count, maxTokens, prefix, tokensPerStep: 1 });
    await this.consumer.expect("flowing");
  }

  async stop(): Promise<{ pairs: Float64Array; merged: number }> {
    this.consumer.send({ type: "stop" });
    const { pairs, merged } = await this.consumer.expect("stopped");
    return { pairs, merged };
  }
}

/** Reads snapshots until the runtime thread is identified with its thread id (it is idle most of the time). */
async function snapshotAfter(markers: ThreadMarker[], ports: number[]): Promise<DescriptorPhase> {
  let phase: DescriptorPhase | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    phase = describePhase(analyzeDescriptors(readProcSnapshot(), markers, ports), CONNECTING_LABEL);
    if (phase.runtimeThread?.tid !== undefined) break;
    await sleep(25);
  }
  return phase!;
}

function portOf(address: string): number {
  return Number(/:(\d+)$/.exec(address)?.[1] ?? Number.NaN);
}

export async function runAfter(o: PhaseOptions): Promise<PhaseResult> {
  const port = await freeTcpPort();
  const handshakeAddress = `tcp://127.0.0.1:${port}`;
  const engine = await startProbeEngine({ handshakeAddress, stepMs: o.stepMs });
  const consumer = new ConsumerThread<FromConsumer, ToConsumer>(
    new URL("./consumer-worker.js", import.meta.url),
  );
  const markers: ThreadMarker[] = o.marker ? [o.marker] : [];
  const beforeAttach = ({ client, markerFd }: AttachedConsumer) => {
    o.log(
      `after: product client connected (${client.inputAddress}, ${client.outputAddress}); consumer thread attaching`,
    );
    if (o.marker && markerFd !== undefined) {
      const baseline = baselineEventfdsOf(readProcSnapshot(), markerFd);
      markers.push({
        label: CONSUMER_LABEL,
        markerFd,
        ...(baseline ? { baselineEventfds: baseline } : {}),
      });
    }
  };
  const stoppable = { handshakeAddress, stop: () => engine.stop() };
  return withAttachedConsumer({ consumer, engine: stoppable, beforeAttach }, async ({ client }) => {
    await sleep(100);
    const descriptors = o.marker
      ? await snapshotAfter(markers, [portOf(client.inputAddress), portOf(client.outputAddress)])
      : undefined;
    const session = new WorkerSession(consumer);
    const delays: BlockedDelayResult[] = [];
    for (const mode of o.modes) {
      o.log(
        `after: blocking the connecting thread ${o.blockMs} ms (${mode}) while ${o.streams} streams run on the consumer thread`,
      );
      delays.push(
        await measureBlockedDelay(session, {
          mode,
          blockMs: o.blockMs,
          streams: o.streams,
          stepMs: o.stepMs,
          prefix: `after-${mode}`,
        }),
      );
    }
    return { descriptors, delays };
  });
}
