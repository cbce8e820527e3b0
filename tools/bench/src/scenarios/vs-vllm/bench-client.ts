// vLLM's benchmark client, `vllm bench serve`, as vLLM users run it: its argv for a workload, its saved
// result (`--save-result --save-detailed`) read into the figures this scenario compares, and runs that call
// back when the measured part starts and ends (the client prints those lines), so CPU is sampled over the
// benchmark itself, not over the client's start-up and dataset generation.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
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
/** python/vllm_bench_loop.py prints this after each run, with the CLI's exit code. */
export const DONE_LINE = /^vs-vllm-bench-loop: done (-?\d+)$/;

const LOOP = fileURLToPath(new URL("../../../python/vllm_bench_loop.py", import.meta.url));

interface Pending {
  readonly args: ClientArgs;
  readonly onStart: (pid: number) => unknown;
  readonly onEnd: (pid: number) => unknown;
  started?: { value: unknown };
  ended?: { value: unknown };
  hookError?: unknown;
  readonly resolve: (run: { result: ClientResult; started: unknown; ended: unknown }) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * vLLM's benchmark client: `vllm bench serve` runs one after the other in one Python process
 * (python/vllm_bench_loop.py: vLLM's CLI entry point per run), so that its start-up is paid once. Each run
 * calls `onStart(pid)` at START_LINE and `onEnd(pid)` at END_LINE (the client's pid, for its CPU), then
 * resolves with the result file. A run that fails or outlives its bound rejects with the output's tail (on
 * a timeout the process is killed and the next run starts a new one). If this Node process dies, the loop
 * reads the end of its stdin and exits after the run in progress.
 */
export class BenchClient {
  private child: ChildProcess | undefined;
  private pending: Pending | undefined;
  private readonly tail: string[] = [];

  constructor(private readonly kit: RealEngineKit) {}

  run<S, E>(
    args: ClientArgs,
    hooks: { onStart(pid: number): S; onEnd(pid: number): E },
    timeoutMs: number,
  ): Promise<{ result: ClientResult; started: S; ended: E }> {
    if (this.pending) return Promise.reject(new Error("BenchClient runs one benchmark at a time"));
    const child = this.child ?? this.spawn();
    return new Promise((resolve, reject) => {
      this.tail.length = 0;
      this.pending = {
        args,
        onStart: hooks.onStart,
        onEnd: hooks.onEnd,
        resolve: resolve as Pending["resolve"],
        reject,
        timer: setTimeout(() => this.fail(`did not finish within ${timeoutMs / 1000} s`, true), timeoutMs),
      };
      child.stdin?.write(`${JSON.stringify(benchArgv(args))}\n`);
    });
  }

  /** Ends the Python process (stdin closed: its loop ends), killing it if it does not exit within 10 s. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "close");
    child.stdin?.end();
    const timer = setTimeout(() => this.killGroup(child), 10_000);
    await exited;
    clearTimeout(timer);
  }

  private spawn(): ChildProcess {
    const child = spawn(this.kit.python, [LOOP], {
      env: { ...process.env, ...this.kit.env, OMP_NUM_THREADS: "1", PYTHONUNBUFFERED: "1" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.child = child;
    child.stdin?.on("error", () => {}); // a dead child: reported by "close"
    for (const stream of [child.stdout, child.stderr]) {
      if (stream)
        createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (l) =>
          this.onLine(l),
        );
    }
    child.once("close", (code, signal) => {
      if (this.child === child) this.child = undefined;
      this.fail(`exited (code ${code}, signal ${signal})`, false);
    });
    return child;
  }

  private killGroup(child: ChildProcess): void {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }

  private fail(what: string, kill: boolean): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    if (kill && this.child) {
      this.killGroup(this.child);
      this.child = undefined;
    }
    p.reject(new Error(`vllm bench serve ${what}; its last lines:\n${this.tail.join("\n")}`));
  }

  private onLine(line: string): void {
    this.tail.push(line);
    if (this.tail.length > 40) this.tail.shift();
    const p = this.pending;
    const pid = this.child?.pid;
    if (!p || pid === undefined) return;
    try {
      if (!p.started && START_LINE.test(line)) p.started = { value: p.onStart(pid) };
      else if (p.started && !p.ended && END_LINE.test(line)) p.ended = { value: p.onEnd(pid) };
    } catch (error) {
      p.hookError ??= error;
    }
    const done = DONE_LINE.exec(line);
    if (!done) return;
    if (p.hookError) {
      this.settle(() => p.reject(p.hookError));
      return;
    }
    if (done[1] !== "0") {
      this.fail(`exited with code ${done[1]}`, false);
      return;
    }
    if (!p.started || !p.ended) {
      this.fail("never printed its start and result lines", false);
      return;
    }
    const { started, ended } = p;
    this.settle(() => {
      const json = JSON.parse(readFileSync(join(p.args.resultDir, p.args.resultFile), "utf8")) as unknown;
      p.resolve({ result: parseBenchResult(json), started: started.value, ended: ended.value });
    });
  }

  private settle(finish: () => void): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    try {
      finish();
    } catch (error) {
      p.reject(error);
    }
  }
}
