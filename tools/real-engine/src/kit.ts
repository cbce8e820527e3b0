// Finds a vLLM to run: a user's own Python where `import vllm` works (VLLM_ENGINE_CORE_PYTHON), or the
// project's CPU kit (../shared/vllm-cpu next to the repository, set up on demand). Either way the answer
// is a ready kit or one line saying why there is none, for `describe.skipIf`.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** How to run vLLM's CLI and a Python that imports vLLM and the model-free executor. */
export interface RealEngineKit {
  /** `vllm` CLI: command and leading arguments (then `serve …`). */
  readonly vllm: { readonly command: string; readonly args: readonly string[] };
  /** A Python interpreter where `import vllm` and `import vllm_model_free` work, with `env`. */
  readonly python: string;
  /** Environment to add for both (import paths, offline switches). */
  readonly env: Readonly<Record<string, string>>;
  /** Where it came from, for logs. */
  readonly description: string;
}

export type KitLookup =
  | { readonly ready: true; readonly kit: RealEngineKit }
  | { readonly ready: false; readonly reason: string };

export interface KitLookupOptions {
  /** Environment to read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** Run the kit's setup.sh when it is not set up yet (default true). */
  readonly setUp?: boolean;
  /** Bound on setup.sh (default 15 min) and on the `import vllm` probe (default 3 min). */
  readonly setupTimeoutMs?: number;
  readonly probeTimeoutMs?: number;
}

const here = dirname(fileURLToPath(import.meta.url));
/** The repository root (this file is tools/real-engine/{src,dist}/kit.*). */
export const repoRoot = resolve(here, "..", "..", "..");
/** The Python package folder of the model-free executor (goes on the Python path). */
export const executorDir = join(repoRoot, "tools", "vllm-executor");
/** `--distributed-executor-backend` value for the model-free executor. */
export const EXECUTOR_CLASS = "vllm_model_free.ModelFreeExecutor";

/** The model directories shipped with the executor (config.json only; see their PROVENANCE.md). */
export const modelDirs = {
  /** Small dense Qwen3 (2 layers, 2 KV heads × 64, vocab 151936): dense DP ranks are independent. */
  dense: join(executorDir, "models", "qwen3-tiny"),
  /** Small Qwen3-MoE (4 experts): DP ranks are coordinated (waves, dummy batches). */
  moe: join(executorDir, "models", "qwen3-moe-tiny"),
} as const;

const OFFLINE_ENV = {
  HF_HUB_OFFLINE: "1",
  TRANSFORMERS_OFFLINE: "1",
  VLLM_NO_USAGE_STATS: "1",
  DO_NOT_TRACK: "1",
};

interface RunResult {
  readonly code: number | null;
  readonly output: string;
  readonly timedOut: boolean;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, output: String(error), timedOut });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output, timedOut });
    });
  });
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").trim() || "no output";
}

function withPath(existing: string | undefined, ...dirs: string[]): string {
  return [...dirs, ...(existing ? [existing] : [])].join(delimiter);
}

/** The kit folder: VLLM_CPU_KIT, else `shared/vllm-cpu` beside the repository or beside one of its parents. */
export function findKitDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.VLLM_CPU_KIT) return existsSync(join(env.VLLM_CPU_KIT, "vllm")) ? env.VLLM_CPU_KIT : null;
  let dir = repoRoot;
  for (let i = 0; i < 4; i++) {
    const candidate = join(dirname(dir), "shared", "vllm-cpu");
    if (existsSync(join(candidate, "vllm"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

/** The kit's environment folder: VLLM_CPU_HOME, else the default its `vllm` script names. */
export function kitHome(kitDir: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.VLLM_CPU_HOME) return env.VLLM_CPU_HOME;
  const script = readFileSync(join(kitDir, "vllm"), "utf8");
  const name = /\.cache\/(vllm-cpu-[0-9a-f]+)/.exec(script)?.[1] ?? "vllm-cpu";
  return join(env.HOME ?? homedir(), ".cache", name);
}

function kitIsSetUp(home: string): boolean {
  return (
    existsSync(join(home, "venv", "bin", "python")) && existsSync(join(home, "src", "vllm", "_version.py"))
  );
}

async function lookUp(options: KitLookupOptions): Promise<KitLookup> {
  const env = options.env ?? process.env;
  const userPython = env.VLLM_ENGINE_CORE_PYTHON;
  if (userPython) {
    const kitEnv = { ...OFFLINE_ENV, PYTHONPATH: withPath(env.PYTHONPATH, executorDir) };
    const probe = await run(
      userPython,
      ["-c", "import vllm, vllm_model_free; print(vllm.__version__)"],
      { ...env, ...kitEnv },
      options.probeTimeoutMs ?? 180_000,
    );
    if (probe.code !== 0) {
      return {
        ready: false,
        reason: `VLLM_ENGINE_CORE_PYTHON=${userPython} cannot import vllm: ${lastLine(probe.output)}`,
      };
    }
    return {
      ready: true,
      kit: {
        vllm: { command: userPython, args: ["-m", "vllm.entrypoints.cli.main"] },
        python: userPython,
        env: kitEnv,
        description: `vLLM ${lastLine(probe.output)} from VLLM_ENGINE_CORE_PYTHON=${userPython}`,
      },
    };
  }
  const kitDir = findKitDir(env);
  if (!kitDir) {
    return {
      ready: false,
      reason: `no vLLM: neither ../shared/vllm-cpu beside ${repoRoot} (or VLLM_CPU_KIT) nor VLLM_ENGINE_CORE_PYTHON`,
    };
  }
  const home = kitHome(kitDir, env);
  if (!kitIsSetUp(home)) {
    if (options.setUp === false)
      return { ready: false, reason: `the vLLM kit at ${kitDir} is not set up (run ${kitDir}/setup.sh)` };
    const setup = await run(join(kitDir, "setup.sh"), [], env, options.setupTimeoutMs ?? 15 * 60_000);
    if (setup.code !== 0 || !kitIsSetUp(home)) {
      const why = setup.timedOut ? "timed out" : lastLine(setup.output);
      return { ready: false, reason: `${kitDir}/setup.sh failed: ${why}` };
    }
  }
  return {
    ready: true,
    kit: {
      vllm: { command: join(kitDir, "vllm"), args: [] },
      python: join(home, "venv", "bin", "python"),
      env: {
        ...OFFLINE_ENV,
        // The kit's `vllm` script puts this on the Python path; for `python` itself the same order it uses.
        VLLM_CPU_PYTHONPATH: withPath(env.VLLM_CPU_PYTHONPATH, executorDir),
        PYTHONPATH: withPath(env.PYTHONPATH, join(kitDir, "python", "stubs"), executorDir, join(home, "src")),
      },
      description: `vLLM kit ${kitDir} (environment ${home})`,
    },
  };
}

let cached: Promise<KitLookup> | null = null;

/** Finds (and if needed sets up) a vLLM to run, once per process. */
export function realEngineKit(options: KitLookupOptions = {}): Promise<KitLookup> {
  if (options.env) return lookUp(options);
  cached ??= lookUp(options);
  return cached;
}
