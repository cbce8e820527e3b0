import { workerData } from "node:worker_threads";
import { TransportOutsideRuntimeError } from "@vllm-engine-core/errors";
import { RUNTIME_PROTOCOL_VERSION, RUNTIME_WORKER_MARKER } from "@vllm-engine-core/protocol";

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
  if (marker !== RUNTIME_PROTOCOL_VERSION) throw new TransportOutsideRuntimeError();
}
