// The bench's consumer thread: attaches to the product's connection with EngineCoreClient.attach(handle)
// and runs the streams on this thread (neither the caller nor the runtime). Never loads zeromq.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort } from "node:worker_threads";
import { EngineCoreClient, type EngineCoreOutputStream } from "@vllm-engine-core/client";
import {
  callRequest,
  createThreadMarker,
  SampleBuffer,
  streamRequestIds,
  summarize,
  wallNowMs,
} from "@vllm-engine-core/probe";
import type { ConsumerRun, FromConsumer, MemoryUsage, ToConsumer } from "./consumer-protocol.js";
import { CREDIT_STEPS, CreditWriter } from "./replay/credit.js";
import { MeasureWindow } from "./window.js";

if (parentPort === null) throw new Error("consumer-worker.js must run as a worker thread");
const port = parentPort;
const post = (m: FromConsumer) => port.postMessage(m);

const marker = await createThreadMarker();
let client: EngineCoreClient | undefined;
let runCounter = 0;

/** Memory of this thread's heap (and the process RSS), after a full GC when the process runs with --expose-gc. */
function memoryUsage(): MemoryUsage {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

async function openStreams(ids: readonly string[], maxTokens: number): Promise<EngineCoreOutputStream[]> {
  const streams: EngineCoreOutputStream[] = [];
  // Submissions are round trips to the runtime: keep a bounded number in flight.
  for (let i = 0; i < ids.length; i += 256) {
    const batch = ids.slice(i, i + 256).map((id) => client!.call(callRequest(id, maxTokens)));
    streams.push(...(await Promise.all(batch)));
  }
  return streams;
}

async function windowed(run: Extract<ConsumerRun, { kind: "throughput" | "latency" }>): Promise<void> {
  const ids =
    run.kind === "throughput"
      ? streamRequestIds("load", run.streams)
      : streamRequestIds(`${run.kind}-${++runCounter}`, run.streams);
  const credit =
    run.kind === "throughput" && run.creditFile
      ? new CreditWriter(run.creditFile, CREDIT_STEPS * run.streams)
      : undefined;
  let closeWindow: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    closeWindow = resolve;
  });
  const window = new MeasureWindow({
    streams: run.streams,
    warmupMs: run.warmupMs,
    measureMs: run.measureMs,
    onPhase: (phase) => {
      post({ type: "phase", phase });
      if (phase === "done") closeWindow();
    },
  });
  // Throughput reads the clock once per 64 deliveries (and the watchdog every 20 ms): a clock read per
  // output would be a measurable share of the work being measured. Latency needs it per output anyway.
  let measuring = false;
  let sinceTick = 0;
  const tick = () => {
    measuring = window.tick(performance.now());
  };
  const watchdog = setInterval(tick, 20);
  let tokens = 0;
  let outputs = 0;
  let merged = 0;
  const delays = new SampleBuffer(1 << 16);
  const consume = async (stream: EngineCoreOutputStream) => {
    let first = true;
    for await (const output of stream) {
      if (first) {
        first = false;
        window.streamFlowing(performance.now());
      }
      if (output.finishReason != null) return;
      const n = output.newTokenIds.length;
      credit?.add(n);
      if (run.kind === "latency" || ++sinceTick === 64) {
        sinceTick = 0;
        tick();
      }
      if (!measuring) continue;
      tokens += n;
      outputs++;
      if (n > 1) merged++;
      if (run.kind === "latency") delays.add(wallNowMs() - stream.lastTimestamp * 1000);
    }
  };
  const streams = await openStreams(ids, run.maxTokens);
  const loops = streams.map(consume);
  await closed;
  clearInterval(watchdog);
  await client!.abort(ids);
  await Promise.all(loops);
  credit?.close();
  if (run.kind === "throughput") {
    post({ type: "throughput", outcome: { tokens, outputs, merged, windowMs: window.durationMs } });
  } else {
    post({ type: "latency", outcome: { delay: summarize(delays.values()), merged } });
  }
}

async function openAndHold(run: Extract<ConsumerRun, { kind: "open-streams" }>): Promise<void> {
  const ids = streamRequestIds(`open-${++runCounter}`, run.streams);
  let flowing = 0;
  let allFlowing: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    allFlowing = resolve;
  });
  const consume = async (stream: EngineCoreOutputStream) => {
    let first = true;
    for await (const output of stream) {
      if (first && ++flowing === run.streams) allFlowing();
      first = false;
      if (output.finishReason != null) return;
    }
  };
  post({ type: "memory", usage: memoryUsage() }); // baseline: attached, no stream open yet
  const loops = (await openStreams(ids, run.maxTokens)).map(consume);
  await ready;
  await sleep(run.settleMs);
  post({ type: "memory", usage: memoryUsage() });
  await client!.abort(ids);
  await Promise.all(loops);
}

async function slowReader(run: Extract<ConsumerRun, { kind: "slow-reader" }>): Promise<void> {
  const ids = streamRequestIds(`slow-${++runCounter}`, run.streams + 1);
  const streams = await openStreams(ids, run.maxTokens);
  const slow = streams.pop()!;
  let fastTokens = 0;
  let stop = false;
  const fast = streams.map(async (stream) => {
    for await (const output of stream) {
      if (output.finishReason != null || stop) return;
      fastTokens += output.newTokenIds.length;
    }
  });
  const samples: MemoryUsage[] = [];
  let slowRead = 0;
  const end = performance.now() + run.durationMs;
  let nextSample = performance.now();
  while (performance.now() < end) {
    const r = await slow.next();
    if (r.done) break;
    slowRead += r.value.newTokenIds.length;
    if (performance.now() >= nextSample) {
      samples.push(memoryUsage());
      nextSample += 1000;
    }
    await sleep(run.slowReadEveryMs);
  }
  // Everything queued for the slow stream now arrives as merged deltas.
  const backlog = await slow.next();
  const slowBufferedTokens = backlog.done ? 0 : backlog.value.newTokenIds.length;
  samples.push(memoryUsage());
  stop = true;
  await client!.abort(ids);
  await Promise.all(fast);
  post({
    type: "slow-reader",
    outcome: { samples, slowBufferedTokens, slowTokens: slowRead + slowBufferedTokens, fastTokens },
  });
}

async function handle(message: ToConsumer): Promise<void> {
  switch (message.type) {
    case "attach":
      client = await EngineCoreClient.attach(message.handle);
      post({ type: "attached" });
      return;
    case "run":
      if (client === undefined) throw new Error("run before attach");
      if (message.run.kind === "throughput" || message.run.kind === "latency") await windowed(message.run);
      else if (message.run.kind === "open-streams") await openAndHold(message.run);
      else await slowReader(message.run);
      return;
    case "close":
      await client?.detach();
      await marker?.close();
      post({ type: "closed" });
      port.close();
      return;
  }
}

port.on("message", (message: ToConsumer) => {
  handle(message).catch((error: unknown) => {
    const e = error instanceof Error ? error : new Error(String(error));
    post({ type: "error", message: `${e.name}: ${e.message}`, stack: e.stack });
  });
});
post({ type: "marker", fd: marker?.fd });
