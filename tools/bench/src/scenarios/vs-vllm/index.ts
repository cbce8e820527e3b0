// The vs-vllm scenario: vLLM's Python OpenAI server and ours, each in front of its own real vLLM engine core
// (model-free executor), driven by vLLM's own `vllm bench serve`, A/B over rounds, per workload
// (workloads.ts). Writes bench-results/vs-vllm.json and bench-results/VS-VLLM.md. Skips, saying why,
// when no vLLM can be found or set up (tools/real-engine's kit lookup: ../shared/vllm-cpu).
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import {
  prepareServerModelDir,
  type RealEngineKit,
  realEngineKit,
  repoRoot,
} from "@vllm-engine-core/real-engine";
import { BenchClient } from "./bench-client.js";
import { type CpuSnapshot, snapshot, windowCpu } from "./proc.js";
import {
  renderMarkdown,
  type SideRun,
  summarizeWorkload,
  type VsVllmDocument,
  type WorkloadResult,
} from "./report.js";
import { oursServerSetup, type Side, type Stack, startStack } from "./stacks.js";
import { ENGINE, selectWorkloads, type Workload } from "./workloads.js";

export interface VsVllmConfig {
  /** Short version (also VS_VLLM_QUICK=1). */
  readonly quick?: boolean;
  /** Workload ids (also VS_VLLM_WORKLOADS=a,b). */
  readonly workloads?: readonly string[];
  /** A/B rounds, at least 2 (also VS_VLLM_ROUNDS). */
  readonly rounds?: number;
  /** Where vs-vllm.json and VS-VLLM.md go (default bench-results/ at the repository root). */
  readonly outDir?: string;
  readonly command?: string;
  readonly log?: (line: string) => void;
}

const START_TIMEOUT_MS = 300_000;
const CLIENT_TIMEOUT_MS = 300_000;

/** `v24.1.0 (path)` for another Node.js binary (VS_VLLM_OURS_NODE), or the path when it cannot say. */
function nodeVersionOf(node: string): string {
  try {
    return `${execFileSync(node, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim()} (${node})`;
  } catch {
    return node;
  }
}

function envList(value: string | undefined): string[] | undefined {
  return value
    ? value
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
}

async function runSide(
  client: BenchClient,
  stack: Stack,
  workload: Workload,
  round: number,
  seed: number,
  tokenizerDir: string,
  resultDir: string,
): Promise<SideRun> {
  let roles: ReturnType<Stack["roles"]> | undefined;
  const { result, started, ended } = await client.run<CpuSnapshot, CpuSnapshot>(
    {
      workload,
      baseUrl: stack.baseUrl,
      tokenizerDir,
      seed,
      resultDir,
      resultFile: `${workload.name}-${stack.side}-${round}.json`,
    },
    {
      onStart: (clientPid) => {
        roles = stack.roles(clientPid);
        return snapshot(roles);
      },
      onEnd: () => snapshot(roles!),
    },
    CLIENT_TIMEOUT_MS,
  );
  return { side: stack.side, round, seed, client: result, cpu: windowCpu(started, ended) };
}

async function runWorkload(
  kit: RealEngineKit,
  client: BenchClient,
  workload: Workload,
  rounds: number,
  tokenizerDir: string,
  resultDir: string,
  log: (line: string) => void,
): Promise<WorkloadResult> {
  const options = {
    kit,
    flags: { maxNumSeqs: ENGINE.maxNumSeqs, maxModelLen: ENGINE.maxModelLen, blockSize: ENGINE.blockSize },
    executor: { stepMs: workload.stepMs, kvCacheBytes: ENGINE.kvCacheBytes },
    timeoutMs: START_TIMEOUT_MS,
  };
  log(
    `vs-vllm ${workload.name}: starting both stacks (each: a real engine core, step ${workload.stepMs} ms)`,
  );
  const started = await Promise.allSettled([startStack("vllm", options), startStack("ours", options)]);
  const stacks = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  try {
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const bySide = (side: Side) => stacks.find((s) => s.side === side)!;
    const runs: SideRun[] = [];
    for (let round = 1; round <= rounds; round++) {
      // A B, then B A: neither side always runs first after the stacks' start-up.
      const order: Side[] = round % 2 === 1 ? ["vllm", "ours"] : ["ours", "vllm"];
      for (const side of order) {
        const run = await runSide(client, bySide(side), workload, round, round, tokenizerDir, resultDir);
        log(
          `  round ${round} ${side.padEnd(4)}: ${run.client.outputTokS.toFixed(0)} tok/s, TTFT p50 ${run.client.ttftP50Ms.toFixed(1)} ms, ` +
            `ITL p99 ${run.client.itlP99Ms.toFixed(1)} ms, server ${((run.cpu.serverSeconds / run.client.totalOutputTokens) * 1e6).toFixed(1)} µs CPU/token ` +
            `(${run.client.completed} completed, ${run.client.failed} failed)`,
        );
        runs.push(run);
      }
    }
    return summarizeWorkload(workload, runs, availableParallelism());
  } finally {
    await Promise.all(stacks.map((s) => s.stop()));
  }
}

export async function vsVllm(config: VsVllmConfig = {}): Promise<VsVllmDocument> {
  const log = config.log ?? ((line: string) => console.error(line));
  const started = performance.now();
  const quick = config.quick ?? process.env.VS_VLLM_QUICK === "1";
  const rounds = Math.max(2, config.rounds ?? Number(process.env.VS_VLLM_ROUNDS ?? 2));
  const outDir = config.outDir ?? join(repoRoot, "bench-results");
  const loadStart = loadavg();
  const base = {
    tool: "@vllm-engine-core/bench vs-vllm" as const,
    command: config.command ?? `node tools/bench/dist/main.js --only vs-vllm${quick ? " --quick" : ""}`,
    generatedAt: new Date().toISOString(),
    quick,
    rounds,
    cores: availableParallelism(),
    engine: {
      max_num_seqs: ENGINE.maxNumSeqs,
      max_model_len: ENGINE.maxModelLen,
      block_size: ENGINE.blockSize,
      "KV cache": `${ENGINE.kvCacheBytes / 2 ** 20} MiB`,
      model: "tools/vllm-executor/models/qwen3-tiny (model-free executor)",
      stats: "on (no --disable-log-stats)",
    },
    ours: (() => {
      const setup = oursServerSetup();
      return {
        apiServers: setup.apiServers,
        streamInterval: setup.streamInterval,
        node: setup.node === process.execPath ? process.version : nodeVersionOf(setup.node),
      };
    })(),
  };
  const workloads = selectWorkloads({
    quick,
    only: config.workloads ?? envList(process.env.VS_VLLM_WORKLOADS),
  });
  const finish = (
    rest: Pick<VsVllmDocument, "workloads" | "errors"> & { skipped?: string; kit?: string },
  ) => {
    const doc: VsVllmDocument = {
      ...base,
      ...rest,
      loadAvg: { start: loadStart, end: loadavg() },
      durationS: (performance.now() - started) / 1000,
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, "vs-vllm.json"), `${JSON.stringify(doc, null, 2)}\n`);
    writeFileSync(join(outDir, "VS-VLLM.md"), renderMarkdown(doc));
    return doc;
  };

  const lookup = await realEngineKit();
  if (!lookup.ready) {
    log(`vs-vllm skipped: ${lookup.reason}`);
    return finish({ workloads: [], errors: [], skipped: lookup.reason });
  }
  log(
    `vs-vllm: ${lookup.kit.description}; ${workloads.length} workload(s), ${rounds} rounds${quick ? ", quick" : ""}`,
  );
  const tokenizer = prepareServerModelDir();
  // The client's own result files stay for inspection (bench-results/tmp/ is not committed).
  const resultDir = join(outDir, "tmp", "vs-vllm");
  rmSync(resultDir, { recursive: true, force: true });
  mkdirSync(resultDir, { recursive: true });
  const results: WorkloadResult[] = [];
  const errors: string[] = [];
  const client = new BenchClient(lookup.kit);
  try {
    for (const workload of workloads) {
      try {
        results.push(await runWorkload(lookup.kit, client, workload, rounds, tokenizer.dir, resultDir, log));
      } catch (error) {
        const message = `${workload.name}: ${error instanceof Error ? error.message : String(error)}`;
        errors.push(message);
        log(`vs-vllm FAILED ${message}`);
      }
    }
  } finally {
    await client.close();
    tokenizer.remove();
  }
  return finish({ workloads: results, errors, kit: lookup.kit.description });
}
