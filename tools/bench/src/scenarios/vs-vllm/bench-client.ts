// vLLM's benchmark client, `vllm bench serve`, as vLLM users run it: its argv for a workload, its saved
// result (`--save-result --save-detailed`) read into the figures this scenario compares, and a run that
// calls back when the measured part starts and ends (the client prints those lines), so CPU is sampled
// over the benchmark itself, not over the client's start-up and dataset generation.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { registerErrorClass, VllmEngineCoreError } from "@vllm-engine-core/errors";
import type { RealEngineKit } from "@vllm-engine-core/real-engine";
import { type Workload, warmupRequests } from "./workloads.js";

/** The name both servers serve the model under. */
export const SERVED_MODEL = "tiny";

export interface ClientArgs {
  readonly workload: Workload;
  readonly baseUrl: string;
  /** A folder with the tokenizer files (the client counts tokens and builds random prompts with it). */
  readonly tokenizerDir: string;
  /** Same seed on both sides within a round: the same prompts. */
  readonly seed: number;
  readonly resultDir: string;
  readonly resultFile: string;
}

export function benchArgv(a: ClientArgs): string[] {
  const chat = a.workload.endpoint === "chat";
  return [
    "bench",
    "serve",
    "--backend",
    chat ? "openai-chat" : "openai",
    "--base-url",
    a.baseUrl,
    "--endpoint",
    chat ? "/v1/chat/completions" : "/v1/completions",
    "--model",
    SERVED_MODEL,
    "--tokenizer",
    a.tokenizerDir,
    "--dataset-name",
    "random",
    "--random-input-len",
    String(a.workload.inputLen),
    "--random-output-len",
    String(a.workload.outputLen),
    "--num-prompts",
    String(a.workload.prompts),
    "--max-concurrency",
    String(a.workload.streams),
    "--request-rate",
    "inf",
    "--ignore-eos",
    "--seed",
    String(a.seed),
    "--num-warmups",
    String(warmupRequests(a.workload)),
    "--disable-tqdm",
    "--save-result",
    "--save-detailed",
    "--result-dir",
    a.resultDir,
    "--result-filename",
    a.resultFile,
    "--percentile-metrics",
    "ttft,tpot,itl,e2el",
    "--metric-percentiles",
    "50,99",
  ];
}

/** What this scenario reads from one `vllm bench serve` result file. */
export interface ClientResult {
  readonly durationS: number;
  readonly completed: number;
  readonly failed: number;
  readonly totalOutputTokens: number;
  readonly outputTokS: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly itlP50Ms: number;
  readonly itlP99Ms: number;
  readonly e2elP50Ms: number;
  readonly e2elP99Ms: number;
  /** Per request, in the order of the dataset (same order on both sides with the same seed). */
  readonly outputLens: readonly number[];
  readonly texts: readonly string[];
  /** Mean streamed chunks per completed request (ITL gaps + 1): how finely a server split each stream. */
  readonly chunksPerRequest: number;
  /** Distinct non-empty error messages (at most 3). */
  readonly errors: readonly string[];
}

/** A `vllm bench serve` result file without the fields this scenario reads. */
export class BenchResultError extends VllmEngineCoreError {
  override readonly name = "BenchResultError";
  static readonly code = "BENCH_RESULT_MALFORMED" as const;
  readonly code = BenchResultError.code;
  static {
    registerErrorClass(BenchResultError);
  }
  constructor(detail: string) {
    super(
      `${detail}; check that vLLM's benchmark client ran with --save-result --save-detailed and finished`,
    );
  }
}

function num(doc: Record<string, unknown>, key: string): number {
  const v = doc[key];
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new BenchResultError(
      `vllm bench serve result: "${key}" is ${JSON.stringify(v)}, expected a number`,
    );
  }
  return v;
}

function list<T>(doc: Record<string, unknown>, key: string, check: (x: unknown) => x is T): T[] {
  const v = doc[key];
  if (!Array.isArray(v) || !v.every(check)) {
    throw new BenchResultError(
      `vllm bench serve result: "${key}" is missing or malformed (run it with --save-detailed)`,
    );
  }
  return v;
}

const isNumber = (x: unknown): x is number => typeof x === "number";
const isString = (x: unknown): x is string => typeof x === "string";
const isNumberList = (x: unknown): x is number[] => Array.isArray(x) && x.every(isNumber);

/** Reads the JSON `vllm bench serve --save-result --save-detailed` wrote (vllm/benchmarks/serve.py). */
export function parseBenchResult(json: unknown): ClientResult {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new BenchResultError("vllm bench serve result: not a JSON object");
  }
  const doc = json as Record<string, unknown>;
  const outputLens = list(doc, "output_lens", isNumber);
  const texts = list(doc, "generated_texts", isString);
  const itls = list(doc, "itls", isNumberList);
  const errors = list(doc, "errors", isString);
  if (texts.length !== outputLens.length || itls.length !== outputLens.length) {
    throw new BenchResultError(
      `vllm bench serve result: ${outputLens.length} output_lens, ${texts.length} generated_texts, ${itls.length} itls`,
    );
  }
  const done = itls.filter((_gaps, i) => errors[i] === "" && outputLens[i]! > 0);
  return {
    durationS: num(doc, "duration"),
    completed: num(doc, "completed"),
    failed: num(doc, "failed"),
    totalOutputTokens: num(doc, "total_output_tokens"),
    outputTokS: num(doc, "output_throughput"),
    ttftP50Ms: num(doc, "p50_ttft_ms"),
    ttftP99Ms: num(doc, "p99_ttft_ms"),
    itlP50Ms: num(doc, "p50_itl_ms"),
    itlP99Ms: num(doc, "p99_itl_ms"),
    e2elP50Ms: num(doc, "p50_e2el_ms"),
    e2elP99Ms: num(doc, "p99_e2el_ms"),
    outputLens,
    texts,
    chunksPerRequest: done.length === 0 ? 0 : done.reduce((s, gaps) => s + gaps.length + 1, 0) / done.length,
    errors: [...new Set(errors.filter((e) => e !== ""))].slice(0, 3),
  };
}

/** The client prints this right before it sends the measured requests (after the test prompt and warm-ups). */
export const START_LINE = /^Starting main benchmark run/;
/** …and this once every measured request finished. */
export const END_LINE = /Serving Benchmark Result/;

/**
 * Runs `vllm bench serve` with `argv`; calls `onStart(pid)` at START_LINE and `onEnd(pid)` at END_LINE
 * (the client's pid, for its CPU), then reads its result file. Rejects with the output's tail when it
 * fails or runs longer than `timeoutMs`.
 */
export function runBenchClient<S, E>(
  kit: RealEngineKit,
  args: ClientArgs,
  hooks: { onStart(pid: number): S; onEnd(pid: number): E },
  timeoutMs: number,
): Promise<{ result: ClientResult; started: S; ended: E }> {
  return new Promise((resolve, reject) => {
    const child = spawn(kit.vllm.command, [...kit.vllm.args, ...benchArgv(args)], {
      env: { ...process.env, ...kit.env, PYTHONUNBUFFERED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const pid = child.pid;
    if (pid === undefined) {
      reject(new Error(`could not spawn ${kit.vllm.command}`));
      return;
    }
    const tail: string[] = [];
    let started: { value: S } | undefined;
    let ended: { value: E } | undefined;
    let hookError: unknown;
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      try {
        if (!started && START_LINE.test(line)) started = { value: hooks.onStart(pid) };
        else if (started && !ended && END_LINE.test(line)) ended = { value: hooks.onEnd(pid) };
      } catch (error) {
        hookError ??= error;
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", onLine);
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const why = (what: string) =>
        new Error(`vllm bench serve ${what}; its last lines:\n${tail.join("\n")}`);
      if (hookError) return reject(hookError);
      if (code !== 0) return reject(why(`exited with code ${code}, signal ${signal}`));
      if (!started || !ended) return reject(why("never printed its start and result lines"));
      try {
        const json = JSON.parse(readFileSync(join(args.resultDir, args.resultFile), "utf8")) as unknown;
        resolve({ result: parseBenchResult(json), started: started.value, ended: ended.value });
      } catch (error) {
        reject(error);
      }
    });
  });
}
