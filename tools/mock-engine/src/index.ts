// Programmatic API of the mock engine (launcher side: never loads zeromq).
export type { MockCoordinatorEvent, MockEngineCounts } from "./coordinator-events.js";
export {
  type MockCoordinatorOptions,
  type MockCoordinatorProcess,
  mockCoordinatorMainPath,
  startMockCoordinator,
} from "./coordinator-launcher.js";
export type { MockEngineEvent, MockEngineEventName } from "./events.js";
export { ipcSocketPath, removeStaleIpcFiles } from "./ipc-files.js";
export { type MockEngineProcess, mockEngineMainPath, startMockEngine } from "./launcher.js";
export {
  MockEngineExitedError,
  MockEngineNotBuiltError,
  MockEngineStartError,
  MockEngineTimeoutError,
} from "./launcher-errors.js";
export {
  expectedLogprobsRow,
  type LogprobsKind,
  type LogprobsRow,
  type MockPromptLogprobs,
  type MockSampleLogprobs,
  promptLogprobs,
  resolveNumLogprobs,
  sampleLogprobs,
} from "./logprobs.js";
export {
  type MockEngineFaults,
  type MockEngineOptions,
  MockEngineOptionsError,
  type ReadyResponseOverrides,
  type TimestampMode,
  toArgv,
} from "./options.js";
export { reservedTcpPorts } from "./ports.js";
export { echoedTokens, expectedTokens, MOCK_VOCAB_SIZE, modelFreeToken, promptSeed } from "./tokens.js";
