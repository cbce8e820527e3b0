// Options shared by the headless engine and vLLM's own server: the model-free executor's switches (passed
// as environment variables, which vLLM hands on to its engine processes) and the common engine flags.
import { RealEngineOptionsError } from "./errors.js";
import { EXECUTOR_CLASS } from "./kit.js";

/** The model-free executor's options (tools/vllm-executor/README.md, "Options"). */
export interface ExecutorOptions {
  /** KV-cache memory reported as available, bytes (default 64 MiB: 65,536 tokens of the tiny models). */
  readonly kvCacheBytes?: number;
  /** Emulated forward time per step, ms. */
  readonly stepMs?: number;
  /** Emulated forward time per scheduled token, µs. */
  readonly tokenUs?: number;
  /** Raise inside execute_model on this step (1-based, steps that schedule tokens): reaches ENGINE_CORE_DEAD. */
  readonly failAtStep?: number;
  /** A JSON script file mapping prompt token-id subsequences to output ids. */
  readonly scriptFile?: string;
  /** After a script: "continue" with deterministic ids (default) or emit "eos". */
  readonly scriptEnd?: "continue" | "eos";
  /** The EOS id for scriptEnd "eos" (default: the model config's eos_token_id). */
  readonly eosTokenId?: number;
  /**
   * Log every request the worker sees added and finished ("model-free executor: request ID finished after N
   * outputs"): finished means freed by vLLM's scheduler (stop, length or abort), so a test can see in the
   * engine log that an abort reached the real engine.
   */
  readonly logRequests?: boolean;
}

/** Engine flags both launchers pass through (each becomes the vLLM flag of the same name). */
export interface EngineFlags {
  readonly maxModelLen?: number;
  readonly maxNumSeqs?: number;
  readonly maxNumBatchedTokens?: number;
  /** Default 16, the CUDA default (the CPU platform would pick 128). */
  readonly blockSize?: number;
  /** Async scheduling (`--async-scheduling` and the kit's VLLM_CPU_ASYNC_SCHEDULING=1); default: vLLM's CPU default, off. */
  readonly asyncScheduling?: boolean;
  /** More `vllm serve` arguments, appended as given. */
  readonly extraFlags?: readonly string[];
}

const EXECUTOR_ENV: Record<keyof ExecutorOptions, string> = {
  kvCacheBytes: "VLLM_MODEL_FREE_KV_CACHE_BYTES",
  stepMs: "VLLM_MODEL_FREE_STEP_MS",
  tokenUs: "VLLM_MODEL_FREE_TOKEN_US",
  failAtStep: "VLLM_MODEL_FREE_FAIL_AT_STEP",
  scriptFile: "VLLM_MODEL_FREE_SCRIPT",
  scriptEnd: "VLLM_MODEL_FREE_SCRIPT_END",
  eosTokenId: "VLLM_MODEL_FREE_EOS_TOKEN_ID",
  logRequests: "VLLM_MODEL_FREE_LOG_REQUESTS",
};

export function executorEnv(options: ExecutorOptions = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(options) as [keyof ExecutorOptions, unknown][]) {
    if (value === undefined) continue;
    const variable = EXECUTOR_ENV[key];
    if (!variable)
      throw new RealEngineOptionsError(
        `executor.${key}`,
        `unknown option; known: ${Object.keys(EXECUTOR_ENV).join(", ")}`,
      );
    if (typeof value === "number" && (!Number.isFinite(value) || value < 0)) {
      throw new RealEngineOptionsError(`executor.${key}`, `must be a finite number >= 0, got ${value}`);
    }
    env[variable] = typeof value === "boolean" ? (value ? "1" : "0") : String(value);
  }
  return env;
}

function positiveInt(name: string, value: number | undefined): string[] {
  if (value === undefined) return [];
  if (!Number.isInteger(value) || value <= 0)
    throw new RealEngineOptionsError(name, `must be a positive integer, got ${value}`);
  return [`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(value)];
}

/** The flags every model-free `vllm serve` gets, then the pass-through ones. */
export function engineArgv(flags: EngineFlags): string[] {
  return [
    "--distributed-executor-backend",
    EXECUTOR_CLASS,
    "--load-format",
    "dummy",
    "--enforce-eager",
    "--block-size",
    String(flags.blockSize ?? 16),
    ...positiveInt("maxModelLen", flags.maxModelLen),
    ...positiveInt("maxNumSeqs", flags.maxNumSeqs),
    ...positiveInt("maxNumBatchedTokens", flags.maxNumBatchedTokens),
    ...(flags.asyncScheduling ? ["--async-scheduling"] : []),
    ...(flags.extraFlags ?? []),
  ];
}

export function asyncSchedulingEnv(flags: EngineFlags): Record<string, string> {
  // The kit's platform plugin keeps async scheduling on only with this set (vLLM's CPU platform turns it off).
  return flags.asyncScheduling ? { VLLM_CPU_ASYNC_SCHEDULING: "1" } : {};
}
