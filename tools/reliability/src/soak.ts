// Soak run (not in CI): `node dist/soak.mjs [--minutes 10] [--concurrency 64] [--abort-rate 0.25]
// [--step-ms 2] [--report-seconds 10] [--seed N]`. Steady load on a two-engine mock process with random
// aborts (AbortSignal, abort(), leaving the loop). Checks that every request ends exactly once and with the
// right tokens, prints every error as it happens and RSS/heap/fds/threads over time. Exit code 1 on any
// violation.
import { type ChildProcess, spawn } from "node:child_process";
import { EngineCoreClient, FinishReason } from "@vllm-engine-core/client";
import { expectedTokens, mockEngineMainPath, toArgv } from "@vllm-engine-core/mock-engine";
import { numberArgs } from "./args.js";
import { ipcAddress, removeIpcFiles, sleep, waitForIdleEngines } from "./harness.js";
import { between, pick, type Random, seededRandom } from "./random.js";
import { mb, sample } from "./resources.js";

const args = numberArgs(process.argv.slice(2), {
  minutes: 10,
  concurrency: 64,
  abortRate: 0.25,
  stepMs: 2,
  reportSeconds: 10,
  seed: Date.now() % 1_000_000,
});

type Style = "complete" | "signal" | "abort-call" | "break";
const ABORT_STYLES: Style[] = ["signal", "abort-call", "break"];

interface Counters {
  started: number;
  ended: number;
  byStyle: Record<Style, number>;
  tokens: number;
  utilities: number;
}

const counters: Counters = {
  started: 0,
  ended: 0,
  byStyle: { complete: 0, signal: 0, "abort-call": 0, break: 0 },
  tokens: 0,
  utilities: 0,
};
const violations: string[] = [];
const endCounts = new Map<string, number>(); // live requests only: an entry is deleted on its (first) end
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

function violation(text: string): void {
  violations.push(`${elapsed()} ${text}`);
  console.error(`[soak] ${elapsed()} VIOLATION ${text}`);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The mock engine with its event log discarded: a 10-minute run would otherwise buffer millions of events. */
function spawnEngine(handshakeAddress: string): { child: ChildProcess; stop(): Promise<void> } {
  const argv = toArgv({ handshakeAddress, engineIndices: [0, 1], stepMs: args.stepMs });
  const child = spawn(process.execPath, [mockEngineMainPath(), ...argv], {
    stdio: ["ignore", "ignore", "inherit", "ipc"], // ipc: the engine dies with this process
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    async stop() {
      child.kill("SIGTERM");
      const escalate = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(escalate);
    },
  };
}

/** Records the end of a request; a second end of the same request is a violation. */
function ended(requestId: string, style: Style): void {
  const count = endCounts.get(requestId);
  if (count === undefined) {
    violation(`request ${requestId} (${style}) ended again`);
    return;
  }
  endCounts.delete(requestId);
  counters.ended += 1;
  counters.byStyle[style] += 1;
}

async function oneRequest(client: EngineCoreClient, random: Random, n: number): Promise<void> {
  const requestId = `soak-${args.seed}-${n}`;
  const maxTokens = 1 + Math.floor(random() * 120);
  const prompt = [1, 2, 3, n % 1000];
  const style: Style = random() < args.abortRate ? pick(random, ABORT_STYLES) : "complete";
  const controller = new AbortController();
  const reason = new Error("soak: aborted by signal");
  const expected = expectedTokens(requestId, prompt, maxTokens);
  const tokens: number[] = [];
  let finals = 0;
  let afterFinal = 0;
  let finishReason: number | null = null;
  counters.started += 1;
  endCounts.set(requestId, 0);
  let timer: NodeJS.Timeout | undefined;
  try {
    const stream = await client.call(
      { requestId, promptTokenIds: prompt, samplingParams: { maxTokens } },
      style === "signal" ? { signal: controller.signal } : {},
    );
    const abortAfterMs = between(random, 0, maxTokens * args.stepMs);
    if (style === "signal") timer = setTimeout(() => controller.abort(reason), abortAfterMs);
    if (style === "abort-call") {
      timer = setTimeout(() => {
        client
          .abort(requestId)
          .catch((error: unknown) => violation(`abort(${requestId}): ${describe(error)}`));
      }, abortAfterMs);
    }
    const breakAfter = Math.floor(random() * maxTokens);
    let outputs = 0;
    try {
      for await (const output of stream) {
        if (finals > 0) afterFinal += 1;
        tokens.push(...output.newTokenIds);
        if (output.finishReason != null) {
          finals += 1;
          finishReason = output.finishReason;
        }
        outputs += 1;
        if (style === "break" && outputs > breakAfter) break;
      }
    } catch (error) {
      if (!(style === "signal" && error === reason)) throw error;
    }
  } catch (error) {
    violation(`request ${requestId} (${style}): unexpected error ${describe(error)}`);
  } finally {
    clearTimeout(timer);
  }
  counters.tokens += tokens.length;
  if (finals > 1 || afterFinal > 0) {
    violation(
      `request ${requestId} (${style}): ${finals} final outputs, ${afterFinal} outputs after the final one`,
    );
  }
  const prefixOk = tokens.every((t, i) => t === expected[i]);
  if (!prefixOk) violation(`request ${requestId} (${style}): tokens are not the expected sequence`);
  if (finishReason === FinishReason.LENGTH && tokens.length !== maxTokens) {
    violation(`request ${requestId}: finished with ${tokens.length} of ${maxTokens} tokens`);
  }
  if (style === "complete" && finishReason !== FinishReason.LENGTH) {
    violation(`request ${requestId}: never finished (finishReason ${finishReason})`);
  }
  ended(requestId, finishReason === FinishReason.LENGTH ? "complete" : style);
}

async function main(): Promise<void> {
  const random = seededRandom(args.seed);
  const handshakeAddress = ipcAddress("soak");
  const engine = spawnEngine(handshakeAddress);
  const client = await EngineCoreClient.connect({
    transport: { mode: "handshake-owner", handshakeAddress, engineCount: 2, readyTimeoutMs: 30_000 },
  });
  let stopping = false;
  client.onHealthChange((error) => {
    if (!stopping) violation(`health changed: ${describe(error)}`);
  });
  console.error(
    `[soak] seed ${args.seed}: ${args.minutes} min, ${args.concurrency} in flight, abort rate ${args.abortRate}, step ${args.stepMs} ms`,
  );
  const deadline = t0 + args.minutes * 60_000;
  let n = 0;
  const lanes = Array.from({ length: args.concurrency }, async () => {
    while (Date.now() < deadline) await oneRequest(client, random, n++);
  });
  const utilityLoop = (async () => {
    while (Date.now() < deadline) {
      await sleep(1_000);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => client.callUtility("echo", [i])),
      );
      for (const r of results) {
        if (r.status === "rejected") violation(`utility call: ${describe(r.reason)}`);
        else counters.utilities += 1;
      }
    }
  })();

  const rss: { at: number; rss: number }[] = [];
  let lastEnded = 0;
  let lastTokens = 0;
  const report = setInterval(async () => {
    const s = await sample("vec-rel-soak-");
    rss.push({ at: Date.now() - t0, rss: s.rss });
    const rate = (counters.ended - lastEnded) / args.reportSeconds;
    const tokenRate = (counters.tokens - lastTokens) / args.reportSeconds;
    lastEnded = counters.ended;
    lastTokens = counters.tokens;
    console.error(
      `[soak] ${elapsed()} rss ${mb(s.rss)} heap ${mb(s.heapUsed)} fds ${s.fds} threads ${s.threads} | ended ${counters.ended} (${rate.toFixed(0)}/s, ${tokenRate.toFixed(0)} tok/s) live ${endCounts.size} ${JSON.stringify(counters.byStyle)} utilities ${counters.utilities} | violations ${violations.length}`,
    );
  }, args.reportSeconds * 1_000);

  await Promise.all(lanes);
  await utilityLoop;
  clearInterval(report);
  stopping = true;
  if (endCounts.size > 0)
    violation(`${endCounts.size} requests never ended: ${[...endCounts.keys()].slice(0, 5)}`);
  // The engines' own view: no request is still running there (every abort reached its engine).
  if (!(await waitForIdleEngines(client))) violation("the engines still run requests after the load stopped");
  await client.shutdown();
  await engine.stop();
  removeIpcFiles();

  const firstMinute = rss.filter((r) => r.at <= 60_000).map((r) => r.rss);
  const lastMinute = rss.filter((r) => r.at >= rss.at(-1)!.at - 60_000).map((r) => r.rss);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const summary = {
    seed: args.seed,
    minutes: args.minutes,
    requests: counters.started,
    ended: counters.ended,
    byStyle: counters.byStyle,
    tokens: counters.tokens,
    utilities: counters.utilities,
    rssFirstMinuteAvg: mb(avg(firstMinute)),
    rssLastMinuteAvg: mb(avg(lastMinute)),
    rssMax: mb(Math.max(...rss.map((r) => r.rss))),
    rssSeries: rss.map((r) => `${Math.round(r.at / 1000)}s:${(r.rss / 1024 / 1024).toFixed(0)}`).join(" "),
    violations,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (violations.length > 0 || counters.started !== counters.ended) process.exitCode = 1;
}

await main();
