export {
  connectToRealEngine,
  type RealEngine,
  type RealEngineOptions,
  realEngineArgv,
  startRealEngine,
} from "./engine.js";
export { RealEngineExitedError, RealEngineLogTimeoutError, RealEngineOptionsError } from "./errors.js";
export {
  EXECUTOR_CLASS,
  executorDir,
  findKitDir,
  type KitLookup,
  type KitLookupOptions,
  modelDirs,
  type RealEngineKit,
  realEngineKit,
  repoRoot,
} from "./kit.js";
export { type EngineFlags, type ExecutorOptions, engineArgv, executorEnv } from "./options.js";
export { freePort } from "./ports.js";
export { type ExitInfo, spawnVllmProcess, type VllmProcess } from "./process.js";
export {
  prepareServerModelDir,
  qwen3TokenizerFiles,
  startVllmServer,
  type VllmServer,
  type VllmServerOptions,
} from "./server.js";
