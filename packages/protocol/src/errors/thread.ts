// Marker a runtime worker carries in its workerData; the transport refuses to run without it.
export const RUNTIME_WORKER_MARKER = "__vllmEngineCoreRuntime";
export const RUNTIME_PROTOCOL_VERSION = 3;
