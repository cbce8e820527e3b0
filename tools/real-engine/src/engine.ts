// vLLM's real engine core, headless (`vllm serve MODEL --headless`), with the model-free executor. It
// connects to the handshake address and waits there for a frontend (ours, handshake-owner) to bind it;
// the handshake happens once, so each frontend connection needs a fresh engine.
import { EngineCoreClient, type EngineCoreClientConfig } from "@vllm-engine-core/client";
import { RealEngineExitedError, RealEngineOptionsError } from "./errors.js";
import { modelDirs, type RealEngineKit } from "./kit.js";
import {
  asyncSchedulingEnv,
  type EngineFlags,
  type ExecutorOptions,
  engineArgv,
  executorEnv,
} from "./options.js";
import { spawnVllmProcess, type VllmProcess } from "./process.js";

export interface RealEngineOptions extends EngineFlags {
  readonly kit: RealEngineKit;
  /** A directory with a config.json (default: the tiny dense Qwen3, `modelDirs.dense`). */
  readonly modelDir?: string;
  /** The handshake port the engine dials (the frontend binds it); see `freePort()`. */
  readonly port: number;
  readonly host?: string;
  /** Data-parallel ranks, all local (`--data-parallel-size N --data-parallel-size-local N`). Default 1. */
  readonly dataParallelSize?: number;
  readonly executor?: ExecutorOptions;
  /** Extra environment for vLLM (merged over process.env and the kit's). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * `--skip-tokenizer-init` (default true: the model folders hold only config.json). False loads the
   * tokenizer in the engine as a deployed headless engine does — needed by vLLM's structured-outputs
   * manager (`StructuredOutputManager.tokenizer`) — and needs a folder with the tokenizer files
   * (`prepareServerModelDir()`).
   */
  readonly skipTokenizerInit?: boolean;
}

export interface RealEngine extends VllmProcess {
  /** The address the frontend binds as handshake owner: `tcp://host:port`. */
  readonly handshakeAddress: string;
  readonly dataParallelSize: number;
  /** The argv vLLM was started with (after the CLI command). */
  readonly argv: readonly string[];
}

export function realEngineArgv(options: Omit<RealEngineOptions, "kit">): string[] {
  const dp = options.dataParallelSize ?? 1;
  if (!Number.isInteger(dp) || dp < 1)
    throw new RealEngineOptionsError("dataParallelSize", `must be an integer >= 1, got ${dp}`);
  if (!Number.isInteger(options.port) || options.port <= 0 || options.port > 65535) {
    throw new RealEngineOptionsError("port", `must be a TCP port, got ${options.port}`);
  }
  return [
    "serve",
    options.modelDir ?? modelDirs.dense,
    "--headless",
    "--data-parallel-address",
    options.host ?? "127.0.0.1",
    "--data-parallel-rpc-port",
    String(options.port),
    ...(dp > 1 ? ["--data-parallel-size", String(dp), "--data-parallel-size-local", String(dp)] : []),
    ...(options.skipTokenizerInit === false ? [] : ["--skip-tokenizer-init"]),
    ...engineArgv(options),
  ];
}

/** Starts the engine; it then waits for a frontend on `handshakeAddress` (use `connectToRealEngine`). */
export function startRealEngine(options: RealEngineOptions): RealEngine {
  const argv = realEngineArgv(options);
  const env = {
    ...process.env,
    ...options.kit.env,
    ...asyncSchedulingEnv(options),
    ...executorEnv(options.executor),
    ...options.env,
  };
  const child = spawnVllmProcess(options.kit.vllm.command, [...options.kit.vllm.args, ...argv], env);
  return Object.assign(child, {
    handshakeAddress: `tcp://${options.host ?? "127.0.0.1"}:${options.port}`,
    dataParallelSize: options.dataParallelSize ?? 1,
    argv,
  });
}

/**
 * Connects our client to `engine` as handshake owner (every rank), bounded by `timeoutMs` (default 180 s:
 * an engine start is 8–15 s idle, far more with other work on two cores); rejects at once with
 * RealEngineExitedError if vLLM exits first.
 */
export async function connectToRealEngine(
  engine: RealEngine,
  options: {
    timeoutMs?: number;
    config?: Partial<Omit<EngineCoreClientConfig, "transport">> & { transport?: Record<string, unknown> };
  } = {},
): Promise<EngineCoreClient> {
  const timeoutMs = options.timeoutMs ?? 180_000;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no handshake with the real engine within ${timeoutMs} ms`)),
    timeoutMs,
  );
  const died = engine.exited.then((info) => {
    const error = new RealEngineExitedError("the handshake", info.code, info.signal, engine.logLines);
    controller.abort(error);
    throw error;
  });
  died.catch(() => {});
  try {
    const config = {
      ...options.config,
      transport: {
        mode: "handshake-owner",
        handshakeAddress: engine.handshakeAddress,
        engineCount: engine.dataParallelSize,
        readyTimeoutMs: timeoutMs,
        ...options.config?.transport,
      },
    } as EngineCoreClientConfig;
    return await Promise.race([EngineCoreClient.connect(config, { signal: controller.signal }), died]);
  } finally {
    clearTimeout(timer);
  }
}
