import { workerData } from "node:worker_threads";
import { TransportOutsideRuntimeError } from "@vllm-engine-core/errors";

/**
 * The mark a runtime worker carries in its workerData (the runtime's src/runtime-marker.ts writes it; its
 * tests check that the two agree). Not exported from this package's entry: nothing outside needs it.
 */
export const RUNTIME_WORKER_MARKER = "__vllmEngineCoreRuntime";
export const RUNTIME_WORKER_MARKER_VALUE = 4;

/**
 * Refuses to run unless this thread is a runtime worker (its workerData carries the runtime marker).
 *
 * This is a tripwire against accidental use, NOT a security boundary: any code can start a worker with the
 * same workerData. The real guarantees are packaging (this package is private and inlined into the runtime
 * worker bundle) and the import checks in tools/boundaries.
 */
export function assertInsideRuntime(): void {
  const data: unknown = workerData;
  const marker =
    typeof data === "object" && data !== null
      ? (data as Record<string, unknown>)[RUNTIME_WORKER_MARKER]
      : undefined;
  if (marker !== RUNTIME_WORKER_MARKER_VALUE) throw new TransportOutsideRuntimeError();
}
