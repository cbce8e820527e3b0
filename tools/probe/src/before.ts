// "Before": a frontend whose sockets live on the connecting thread (DirectFrontend), consumed on that same
// thread — the shape of the seed's "before".
import { setTimeout as sleep } from "node:timers/promises";
import type { BlockMode } from "./block.js";
import { type BlockedDelayResult, measureBlockedDelay, type StreamingSession } from "./blocked.js";
import { monotonicNowMs } from "./clock.js";
import { DelayRecorder } from "./delays.js";
import { DirectFrontend } from "./direct/direct-frontend.js";
import { startProbeEngine } from "./engine.js";
import { freeTcpPort } from "./net.js";
import { analyzeDescriptors, type ThreadMarker } from "./procfs/analyze.js";
import { type DescriptorPhase, describePhase } from "./procfs/phase.js";
import { readProcSnapshot } from "./procfs/snapshot.js";
import { streamRequestIds, wireRequest } from "./requests.js";

export const CONNECTING_LABEL = "connecting thread";

export interface PhaseOptions {
  blockMs: number;
  stepMs: number;
  streams: number;
  modes: readonly BlockMode[];
  /** The connecting thread's marker (undefined off Linux: no descriptor part). */
  marker: ThreadMarker | undefined;
  log: (line: string) => void;
}

export interface PhaseResult {
  descriptors: DescriptorPhase | undefined;
  /** Before only: ZMQ_FD values read from the sockets themselves, to check the epoll-side count. */
  knownSignalerFds?: number[];
  delays: BlockedDelayResult[];
}

class DirectSession implements StreamingSession {
  #recorder = new DelayRecorder();
  #ids: string[] = [];
  #flowing: (() => void) | undefined;
  readonly #frontend: DirectFrontend;

  constructor(frontend: DirectFrontend) {
    this.#frontend = frontend;
    frontend.startOutputLoop((outputs) => {
      const sentMs = outputs.timestamp * 1000;
      for (const _ of outputs.outputs) this.#recorder.record(sentMs, monotonicNowMs());
      this.#flowing?.();
    });
  }

  async start(count: number, maxTokens: number, prefix: string): Promise<void> {
    this.#recorder = new DelayRecorder();
    this.#ids = streamRequestIds(prefix, count);
    const flowing = new Promise<void>((resolve) => {
      this.#flowing = resolve;
    });
    for (const id of this.#ids) await this.#frontend.submit(wireRequest(id, maxTokens));
    await flowing;
    this.#flowing = undefined;
  }

  async stop(): Promise<{ pairs: Float64Array; merged: number }> {
    const recorder = this.#recorder;
    this.#recorder = new DelayRecorder(); // outputs still in flight after the abort are not counted
    await this.#frontend.abort(this.#ids);
    return { pairs: recorder.pairs(), merged: recorder.merged };
  }
}

export async function runBefore(o: PhaseOptions): Promise<PhaseResult> {
  const port = await freeTcpPort();
  const engine = await startProbeEngine({ handshakeAddress: `tcp://127.0.0.1:${port}`, stepMs: o.stepMs });
  let frontend: DirectFrontend | undefined;
  try {
    frontend = await DirectFrontend.connect({ handshakeAddress: `tcp://127.0.0.1:${port}` });
    o.log(
      `before: control client connected on the connecting thread (${frontend.inputAddress}, ${frontend.outputAddress})`,
    );
    // The output loop runs before the snapshot, as in the product: a receive is pending on both sockets.
    const session = new DirectSession(frontend);
    await sleep(100);
    let descriptors: DescriptorPhase | undefined;
    const knownSignalerFds = frontend.signalerFds();
    if (o.marker) {
      descriptors = describePhase(
        analyzeDescriptors(readProcSnapshot(), [o.marker], frontend.tcpPorts()),
        CONNECTING_LABEL,
      );
    }
    const delays: BlockedDelayResult[] = [];
    for (const mode of o.modes) {
      o.log(
        `before: blocking the connecting thread ${o.blockMs} ms (${mode}) while ${o.streams} streams run`,
      );
      delays.push(
        await measureBlockedDelay(session, {
          mode,
          blockMs: o.blockMs,
          streams: o.streams,
          stepMs: o.stepMs,
          prefix: `before-${mode}`,
        }),
      );
    }
    return { descriptors, knownSignalerFds, delays };
  } finally {
    await frontend?.close();
    await engine.stop();
  }
}
