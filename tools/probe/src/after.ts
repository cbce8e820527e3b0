// "After": the product. The connecting thread calls EngineCoreClient.connect() (all sockets on the runtime
// worker), a third thread attaches with the handle and consumes; the connecting thread is then blocked.
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { EngineCoreClient } from "@vllm-engine-core/client";
import type { PhaseOptions, PhaseResult } from "./before.js";
import { CONNECTING_LABEL } from "./before.js";
import { type BlockedDelayResult, measureBlockedDelay, type StreamingSession } from "./blocked.js";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";
import { startProbeEngine } from "./engine.js";
import { freeTcpPort } from "./net.js";
import { analyzeDescriptors, baselineEventfdsOf, type ThreadMarker } from "./procfs/analyze.js";
import { type DescriptorPhase, describePhase } from "./procfs/phase.js";
import { readProcSnapshot } from "./procfs/snapshot.js";
import { WorkerMailbox } from "./worker-mailbox.js";

export const CONSUMER_LABEL = "consumer thread";

/** Typed request/response over the consumer worker's port. */
export class ConsumerThread extends WorkerMailbox<FromConsumer, ToConsumer> {
  constructor() {
    super(new Worker(new URL("./consumer-worker.js", import.meta.url)));
  }
}

class WorkerSession implements StreamingSession {
  constructor(readonly consumer: ConsumerThread) {}

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
  const engine = await startProbeEngine({ handshakeAddress: `tcp://127.0.0.1:${port}`, stepMs: o.stepMs });
  let client: EngineCoreClient | undefined;
  const consumer = new ConsumerThread();
  try {
    const { fd: consumerFd } = await consumer.expect("marker");
    client = await EngineCoreClient.connect({
      transport: {
        mode: "handshake-owner",
        handshakeAddress: `tcp://127.0.0.1:${port}`,
        readyTimeoutMs: 20_000,
      },
    });
    o.log(
      `after: product client connected (${client.inputAddress}, ${client.outputAddress}); consumer thread attaching`,
    );
    const markers: ThreadMarker[] = o.marker ? [o.marker] : [];
    if (o.marker && consumerFd !== undefined) {
      const baseline = baselineEventfdsOf(readProcSnapshot(), consumerFd);
      markers.push({
        label: CONSUMER_LABEL,
        markerFd: consumerFd,
        ...(baseline ? { baselineEventfds: baseline } : {}),
      });
    }
    consumer.send({ type: "attach", handle: client.handle });
    await consumer.expect("attached");
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
  } finally {
    await consumer.close();
    await client?.shutdown();
    await engine.stop();
  }
}
