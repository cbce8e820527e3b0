// The bare client's CPU per delivered token (this process, every thread: the caller and the runtime) against
// the mock engine in a child process with log_stats on, as the vs-vllm engines run: scheduler stats ride on
// every step. A small, quiet figure for A/B runs of runtime changes (the vs-vllm bench spreads by ±15 %).
// Run: node tools/bench/dist/client-cpu.js [streams=64] [stepMs=10] [windowMs=8000]; prints one JSON line.
import { setTimeout as sleep } from "node:timers/promises";
import { EngineCoreClient } from "@vllm-engine-core/client";
import { startMockEngine } from "@vllm-engine-core/mock-engine";
import { freeTcpPort } from "@vllm-engine-core/probe";

const [streams = 64, stepMs = 10, windowMs = 8000] = process.argv.slice(2).map(Number);
const TOKENS = 128;
/** Long enough for every stream to be running and V8 to have compiled the delivery path. */
const WARMUP_MS = 3000;

const handshakeAddress = `tcp://127.0.0.1:${await freeTcpPort()}`;
const engine = await startMockEngine({ stepMs, logStats: true, handshakeAddress, engineIndices: [0] });
const client = await EngineCoreClient.connect({
  transport: { mode: "handshake-owner", handshakeAddress, engineCount: 1, readyTimeoutMs: 20_000 },
});
// A listener, as `serve` has (its metrics): stats are then unpacked and handed over on this thread.
const unsubscribe = client.onSchedulerStats(() => {});
let tokens = 0;
let next = 0;
let stopping = false;
async function stream(): Promise<void> {
  while (!stopping) {
    const outputs = await client.call({
      requestId: `cpu-${next++}`,
      promptTokenIds: [1, 2, 3, 4],
      samplingParams: { maxTokens: TOKENS, ignoreEos: true },
    });
    for await (const output of outputs) tokens += output.newTokenIds.length;
  }
}
const running = Array.from({ length: streams }, stream);
try {
  await sleep(WARMUP_MS);
  const [tokens0, cpu0] = [tokens, process.cpuUsage()];
  await sleep(windowMs);
  const cpu = process.cpuUsage(cpu0);
  const delivered = tokens - tokens0;
  console.log(
    JSON.stringify({
      streams,
      stepMs,
      tokensPerSecond: Math.round(delivered / (windowMs / 1000)),
      cpuMicrosPerToken: Number(((cpu.user + cpu.system) / delivered).toFixed(2)),
    }),
  );
} finally {
  stopping = true;
  await Promise.all(running);
  unsubscribe();
  await client.shutdown();
  await engine.stop();
}
