// Probe building blocks shared with tools/bench (private workspace package; not published).
export { type BlockMode, blockFor, parkFor, spinFor } from "./block.js";
export { monotonicNowMs } from "./clock.js";
export type { ConsumerControl, ConsumerNotice } from "./consumer/protocol.js";
export { type ConsumerContext, serveConsumer } from "./consumer/serve.js";
export {
  type AttachedConsumer,
  type AttachOptions,
  ConsumerThread,
  withAttachedConsumer,
} from "./consumer/thread.js";
export { DelayRecorder, delaysSentWithin } from "./delays.js";
export {
  type DirectEngine,
  DirectFrontend,
  type DirectFrontendOptions,
  DirectHandshakeError,
} from "./direct/direct-frontend.js";
export { type ProbeEngineOptions, startProbeEngine } from "./engine.js";
export { measureFloor } from "./floor.js";
export { type MachineInfo, machineInfo } from "./machine.js";
export { createThreadMarker, freeTcpPort, type ThreadMarkerHandle } from "./net.js";
export * from "./procfs/analyze.js";
export * from "./procfs/parse.js";
export * from "./procfs/phase.js";
export { type ProcSnapshot, procfsAvailable, readProcSnapshot, type ThreadInfo } from "./procfs/snapshot.js";
export { callRequest, streamRequestIds, wireRequest } from "./requests.js";
export {
  runScenarioFromArgv,
  runScenarioProcess,
  type ScenarioProcessOptions,
  type ScenarioRegistry,
} from "./scenario-process.js";
export { formatMs, percentileSorted, SampleBuffer, type Summary, summarize } from "./stats.js";
export { parseToolArgs } from "./tool-args.js";
