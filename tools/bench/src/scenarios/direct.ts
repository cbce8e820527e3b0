// The single-thread ceiling: one thread receives on its own ZeroMQ PULL, decodes, dispatches into
// per-request queues and consumes them — the product's work without the thread hop. Bench-only code
// (uses zeromq directly through the probe's DirectFrontend).
import { performance } from "node:perf_hooks";
import {
  DirectFrontend,
  monotonicNowMs,
  SampleBuffer,
  streamRequestIds,
  summarize,
  wireRequest,
} from "@vllm-engine-core/probe";
import type { EngineCoreOutput } from "@vllm-engine-core/protocol";
import { AsyncQueue } from "../queue.js";
import { CREDIT_STEPS, CreditWriter } from "../replay/credit.js";
import type { LatencyResult, ThroughputResult } from "../types.js";
import { MeasureWindow } from "../window.js";
import { CpuWindow, labelThreads } from "./cpu-window.js";
import {
  type EngineSpec,
  engineSpecFor,
  loadStreamIds,
  startLoadEngine,
  type ThroughputOptions,
} from "./load-engine.js";
import { WindowProfile } from "./window-profile.js";

const HUGE = 100_000_000;

async function runDirect(
  o: {
    streams: number;
    engine: EngineSpec;
    ids: string[];
    warmupMs: number;
    measureMs: number;
    clockPerOutput: boolean;
    profile?: WindowProfile | undefined;
  },
  onOutput: (output: EngineCoreOutput, sentMs: number, measuring: boolean) => void,
): Promise<{ windowMs: number; cpu: CpuWindow }> {
  const engine = await startLoadEngine(o.engine);
  let frontend: DirectFrontend | undefined;
  const credit = engine.creditFile
    ? new CreditWriter(engine.creditFile, CREDIT_STEPS * o.streams)
    : undefined;
  try {
    frontend = await DirectFrontend.connect({ handshakeAddress: engine.handshakeAddress });
    const cpu = new CpuWindow(engine.pid, process.pid, await labelThreads([], 1));
    let closeWindow: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => {
      closeWindow = resolve;
    });
    const window = new MeasureWindow({
      streams: o.streams,
      warmupMs: o.warmupMs,
      measureMs: o.measureMs,
      onPhase: (phase) => {
        if (phase === "measuring") {
          cpu.start();
          o.profile?.start();
        }
        if (phase === "done") {
          cpu.stop();
          o.profile?.stop();
          closeWindow();
        }
      },
    });
    const queues = new Map<string, AsyncQueue<[EngineCoreOutput, number]>>();
    const { ids } = o;
    for (const id of ids) queues.set(id, new AsyncQueue());
    // Receive + decode (inside DirectFrontend) + dispatch per request, on this thread.
    frontend.startOutputLoop((outputs) => {
      const sentMs = outputs.timestamp * 1000;
      for (const output of outputs.outputs) queues.get(output.requestId)?.push([output, sentMs]);
    });
    // Same clock policy as the product's consumer: once per 64 deliveries unless every output needs it.
    let measuring = false;
    let sinceTick = 0;
    const tick = () => {
      measuring = window.tick(performance.now());
    };
    const consume = async (queue: AsyncQueue<[EngineCoreOutput, number]>) => {
      let first = true;
      for await (const [output, sentMs] of queue) {
        if (first) {
          first = false;
          window.streamFlowing(performance.now());
        }
        credit?.add(output.newTokenIds.length);
        if (o.clockPerOutput || ++sinceTick === 64) {
          sinceTick = 0;
          tick();
        }
        onOutput(output, sentMs, measuring);
      }
    };
    const loops = [...queues.values()].map(consume);
    for (const id of ids) await frontend.submit(wireRequest(id, HUGE));
    const watchdog = setInterval(tick, 20);
    await closed;
    clearInterval(watchdog);
    await frontend.abort(ids);
    for (const q of queues.values()) q.close();
    await Promise.all(loops);
    return { windowMs: window.durationMs, cpu };
  } finally {
    credit?.close();
    await frontend?.close();
    await engine.stop();
  }
}

export async function ceilingThroughput(o: ThroughputOptions): Promise<ThroughputResult> {
  let tokens = 0;
  let merged = 0;
  const run = {
    streams: o.streams,
    engine: engineSpecFor(o),
    ids: loadStreamIds(o.streams),
    warmupMs: o.warmupMs,
    measureMs: o.measureMs,
    clockPerOutput: false,
    profile: o.profileDir
      ? new WindowProfile(o.profileDir, `ceiling-${o.streams}`, "ceiling thread")
      : undefined,
  };
  const { windowMs, cpu } = await runDirect(run, (output, _sent, measuring) => {
    if (!measuring) return;
    tokens += output.newTokenIds.length;
    if (output.newTokenIds.length > 1) merged++;
  });
  const profiles = await run.profile?.result();
  return {
    runner: "ceiling",
    streams: o.streams,
    outputsPerSec: (tokens * 1000) / windowMs,
    tokens,
    merged,
    windowMs,
    cpu: cpu.report,
    ...(profiles ? { profile: profiles } : {}),
  };
}

export async function directLatency(o: {
  streams: number;
  stepMs: number;
  warmupMs: number;
  measureMs: number;
}): Promise<LatencyResult> {
  const delays = new SampleBuffer(1 << 16);
  const run = {
    ...o,
    engine: { kind: "mock" as const, stepMs: o.stepMs },
    ids: streamRequestIds("direct", o.streams),
    clockPerOutput: true,
  };
  const { cpu } = await runDirect(run, (_output, sentMs, measuring) => {
    if (measuring) delays.add(monotonicNowMs() - sentMs);
  });
  return {
    runner: "direct",
    streams: o.streams,
    caller: "idle",
    stepMs: o.stepMs,
    delay: summarize(delays.values()),
    merged: 0,
    cpu: cpu.report,
  };
}
