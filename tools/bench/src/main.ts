#!/usr/bin/env node
// The benchmark: runs every scenario in its own process and writes bench-results/results.json and
// bench-results/RESULTS.md. Bounded to a few minutes on 2 cores. `--help` for options.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { machineInfo, parseToolArgs, runScenarioProcess, type Summary } from "@vllm-engine-core/probe";
import { renderProfile } from "./profile.js";
import {
  type BenchDocument,
  type CodecRow,
  computeGoals,
  type EngineKind,
  type ProbeExtract,
  renderMarkdown,
} from "./report.js";
import { vsVllm } from "./scenarios/vs-vllm/index.js";
import type {
  LatencyResult,
  OpenStreamsMemory,
  ServerBenchResult,
  SlowReaderMemory,
  ThroughputResult,
} from "./types.js";

const HELP = `usage: bench [--quick] [--skip-probe] [--profile] [--only throughput,latency,memory,server,vs-vllm] [--out-dir <dir>]

  --quick       shorter windows (1 s) for a smoke run; numbers are noisier
  --skip-probe  reuse bench-results/probe.json instead of running tools/probe (≈45 s)
  --profile     also profile the product's and the ceiling's working threads (replay engine, 1024 streams)
  --only        run only these sections (the rest is left out of the results); vs-vllm (vLLM's server vs
                ours, many minutes, not in the default set) writes vs-vllm.json and VS-VLLM.md of its own`;

const values = parseToolArgs(HELP, {
  quick: { type: "boolean" },
  "skip-probe": { type: "boolean" },
  profile: { type: "boolean" },
  only: { type: "string" },
  "out-dir": { type: "string" },
});

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..", "..");
const outDir = resolve(values["out-dir"] ?? join(repoRoot, "bench-results"));
const tmpDir = join(outDir, "tmp");
mkdirSync(tmpDir, { recursive: true });
const sections = new Set((values.only ?? "throughput,latency,memory,server").split(","));
const measureMs = values.quick ? 1000 : 3000;
const warmupMs = 500;
const started = performance.now();
const loadAvgStart = loadavg();

function log(line: string): void {
  console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`);
}

/** No scenario takes a minute; a hung one is killed (its engine and helpers exit with it). */
const SCENARIO_TIMEOUT_MS = 120_000;
const errors: string[] = [];

function scenario<T>(name: string, config: object, nodeFlags: string[] = []): Promise<T> {
  return runScenarioProcess<T>(join(here, "scenario-main.js"), name, config, {
    label: `scenario ${name}`,
    nodeFlags,
    timeoutMs: SCENARIO_TIMEOUT_MS,
  });
}

/** Runs a step; a failure is recorded in the results (and printed) instead of ending the bench. */
async function attempt<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    const message = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    errors.push(message);
    log(`FAILED ${message}`);
    return undefined;
  }
}

function gitCommit(): Promise<string | undefined> {
  return new Promise((resolveCommit) => {
    const child = spawn("git", ["rev-parse", "--short", "HEAD"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.once("error", () => resolveCommit(undefined));
    child.once("exit", (code) => resolveCommit(code === 0 ? out.trim() : undefined));
  });
}

function readCodec(): BenchDocument["codec"] {
  const file = join(repoRoot, "packages", "protocol", "bench", "results.json");
  if (!existsSync(file)) {
    return {
      missing:
        "packages/protocol/bench/results.json not found: run `pnpm bench` (it runs the codec bench first).",
    };
  }
  const data = JSON.parse(readFileSync(file, "utf8")) as { date?: string; rows?: CodecRow[] };
  return { source: relative(repoRoot, file), date: data.date, rows: data.rows ?? [] };
}

async function runProbe(): Promise<BenchDocument["probe"]> {
  const file = join(outDir, "probe.json");
  if (!values["skip-probe"]) {
    log("probe: blocked-caller delay and descriptor ownership (tools/probe)");
    const probeMain = join(repoRoot, "tools", "probe", "dist", "main.js");
    await new Promise<void>((resolveProbe, reject) => {
      const child = spawn(process.execPath, [probeMain, "--out", file], { stdio: "inherit" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 3 * SCENARIO_TIMEOUT_MS);
      child.once("error", reject);
      child.once("exit", (code) => {
        clearTimeout(timer);
        if (code === 0) resolveProbe();
        else reject(new Error(`tools/probe failed (exit ${code})`));
      });
    });
  }
  if (!existsSync(file)) {
    return {
      missing: "bench-results/probe.json not found: run `pnpm probe` (or the bench without --skip-probe).",
    };
  }
  const probe = JSON.parse(readFileSync(file, "utf8")) as ProbeExtract;
  return { generatedAt: probe.generatedAt, rows: probe.rows, goal: probe.goal };
}

if (sections.delete("vs-vllm")) {
  const doc = await vsVllm({ quick: values.quick === true, outDir, log });
  if (doc.errors.length > 0) process.exitCode = 1;
  if (sections.size === 0) process.exit();
}

const commit = await gitCommit();
log(
  `machine: ${JSON.stringify(machineInfo())}, load average ${loadAvgStart.map((l) => l.toFixed(2)).join(" ")}`,
);
if (loadAvgStart[0]! > 0.5)
  log("warning: the machine is not idle (1-min load average > 0.5); figures will be noisier");

const probe = (await attempt("probe", runProbe)) ?? {
  missing: "tools/probe failed; see the list of failures",
};
log("floor: bare libzmq hop between two processes");
const floor = await attempt("floor", () =>
  scenario<Summary>("floor", { intervalMs: 10, warmupMs, measureMs }),
);

/** Throughput runs twice (alternating runners) and keeps the best round: capacity, not scheduling luck. */
const THROUGHPUT_ROUNDS = values.quick ? 1 : 2;
const throughput: (ThroughputResult & { engine: EngineKind })[] = [];
if (sections.has("throughput")) {
  for (const streams of [256, 1024]) {
    const recording = join(tmpDir, `recording-${streams}.bin`);
    log(`recording ${streams}-output mock-engine messages for the replay engine`);
    const recorded = await attempt(`record ${streams}`, () =>
      scenario("record", { streams, messages: 64, out: recording }),
    );
    for (const engine of ["replay", "mock"] as const) {
      if (engine === "replay" && recorded === undefined) continue;
      const best = new Map<string, ThroughputResult & { engine: EngineKind }>();
      for (let round = 1; round <= THROUGHPUT_ROUNDS; round++) {
        for (const runner of ["ceiling", "product", "product-metrics", "python"] as const) {
          log(
            `throughput: ${runner}, ${streams} streams, ${engine} engine (round ${round}/${THROUGHPUT_ROUNDS})`,
          );
          const config = { streams, warmupMs, measureMs, ...(engine === "replay" ? { recording } : {}) };
          const result = await attempt(`throughput ${runner}, ${streams} streams, ${engine} engine`, () =>
            scenario<ThroughputResult>(`throughput-${runner}`, config),
          );
          if (result === undefined) continue;
          if (result.skipped) log(`  skipped: ${result.skipped}`);
          else log(`  ${(result.outputsPerSec / 1e6).toFixed(3)} M outputs/s`);
          const previous = best.get(runner);
          const rounds = [...(previous?.rounds ?? []), result.outputsPerSec];
          const keep =
            previous === undefined || result.outputsPerSec > previous.outputsPerSec ? result : previous;
          best.set(runner, { ...keep, engine, rounds });
        }
      }
      throughput.push(...best.values());
    }
  }
}

const latency: LatencyResult[] = [];
if (sections.has("latency")) {
  const stepMs = 10;
  for (const streams of [1, 256, 1024]) {
    for (const caller of ["idle", "busy"] as const) {
      log(`latency: product, ${streams} streams, ${caller} caller`);
      const r = await attempt(`latency product, ${streams} streams, ${caller} caller`, () =>
        scenario<LatencyResult>("latency-product", { streams, stepMs, caller, warmupMs, measureMs }),
      );
      if (r) latency.push(r);
    }
    log(`latency: direct (single thread), ${streams} streams`);
    const r = await attempt(`latency direct, ${streams} streams`, () =>
      scenario<LatencyResult>("latency-direct", { streams, stepMs, warmupMs, measureMs }),
    );
    if (r) latency.push(r);
  }
}

let openStreams: OpenStreamsMemory | undefined;
let slowReader: SlowReaderMemory | undefined;
if (sections.has("memory")) {
  // --expose-gc: heap figures are taken right after a full collection (live objects, not garbage).
  log("memory: 10,000 open streams");
  openStreams = await attempt("memory, 10,000 open streams", () =>
    scenario<OpenStreamsMemory>("memory-open-streams", { streams: 10_000, stepMs: 100, settleMs: 2000 }, [
      "--expose-gc",
    ]),
  );
  log("memory: one slow reader under full load (baseline, slow reader, baseline)");
  slowReader = await attempt("memory, slow reader", () =>
    scenario<SlowReaderMemory>(
      "memory-slow-reader",
      {
        streams: 256,
        slowReadEveryMs: 100,
        durationMs: values.quick ? 3000 : 10_000,
        baselineMs: values.quick ? 1500 : 5000,
        warmupMs: values.quick ? 1000 : 2000,
        maxWarmupMs: 10_000,
      },
      ["--expose-gc"],
    ),
  );
  if (slowReader) {
    const r = slowReader.ratios;
    const w = slowReader.warmup;
    log(`  warm-up ${(w.ms / 1000).toFixed(1)} s${w.settled ? "" : " (start-up backlog not drained)"}`);
    log(
      `  fast streams, slow/baseline: delay p50 ${r.delayP50.toFixed(2)}×, p99 ${r.delayP99.toFixed(2)}×, ` +
        `delivered ${r.deliveredTokensPerSec.toFixed(2)}×, engine steps/s ${r.engineStepsPerSec.toFixed(2)}×`,
    );
  }
}

let server: ServerBenchResult | undefined;
if (sections.has("server")) {
  log("server: 256 streaming chat completions over HTTP vs the bare client; detokenizer; 32k-token prompt");
  server = await attempt("server", () =>
    scenario<ServerBenchResult>("server", {
      streams: 256,
      stepMs: 10,
      warmupMs,
      measureMs,
      longPromptTokens: 32_768,
      detokenizeTokens: 100_000,
    }),
  );
  if (server) {
    log(
      `  ${server.server.tokensPerSec.toFixed(0)} tokens/s over HTTP vs ${server.bare.tokensPerSec.toFixed(0)} bare; ` +
        `added p50 ${server.added.p50.toFixed(2)} ms, p99 ${server.added.p99.toFixed(2)} ms`,
    );
  }
}

let profile: BenchDocument["profile"];
if (values.profile) {
  // Profiles of the working threads over the measurement window (inspector, no hook in the product).
  const profileDir = join(tmpDir, "profiles");
  rmSync(profileDir, { recursive: true, force: true });
  const recording = join(tmpDir, "recording-1024.bin");
  profile = [];
  for (const runner of ["product", "ceiling"] as const) {
    log(`profile: ${runner}, replay engine, 1024 streams (→ ${relative(repoRoot, profileDir)})`);
    const result = await attempt(`profile ${runner}`, async () => {
      if (!existsSync(recording)) await scenario("record", { streams: 1024, messages: 64, out: recording });
      return scenario<ThroughputResult>(`throughput-${runner}`, {
        streams: 1024,
        warmupMs,
        measureMs,
        recording,
        profileDir,
      });
    });
    for (const p of result?.profile ?? []) {
      console.log(renderProfile(p));
      profile.push(p);
    }
  }
}

const base = {
  tool: "@vllm-engine-core/bench" as const,
  command: "pnpm bench",
  generatedAt: new Date().toISOString(),
  commit,
  machine: { ...machineInfo(), loadAvgStart, loadAvgEnd: loadavg() },
  durationS: (performance.now() - started) / 1000,
  codec: readCodec(),
  probe,
  floor,
  throughput,
  latency,
  memory: { openStreams, slowReader },
  server,
  errors,
};
const doc: BenchDocument = { ...base, goals: computeGoals(base), profile };
writeFileSync(join(outDir, "results.json"), `${JSON.stringify(doc, null, 2)}\n`);
const markdown = renderMarkdown(doc);
writeFileSync(join(outDir, "RESULTS.md"), markdown);
console.log(`\n${markdown.slice(markdown.indexOf("## Goals"), markdown.indexOf("## 1."))}`);
log(`wrote ${relative(repoRoot, join(outDir, "RESULTS.md"))} and results.json`);
if (errors.length > 0) {
  log(`${errors.length} step(s) failed: see the top of RESULTS.md`);
  process.exitCode = 1;
}
