// The mark a runtime worker carries in its workerData; the bundled transport refuses to run on a thread
// without it (transport/src/guard.ts keeps its own copy: the transport is bundled into the runtime worker and
// the host side must not load it; transport/test/runtime-marker.test.ts checks that the two agree).
export const RUNTIME_WORKER_MARKER = "__vllmEngineCoreRuntime";
export const RUNTIME_WORKER_MARKER_VALUE = 4;
