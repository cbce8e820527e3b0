// What an engine output message that cannot be decoded costs. vLLM's clients treat any such message as
// fatal for the whole client (Python: MPClient's process_outputs_socket ends on the exception and the
// output handler fails everything, vllm/v1/engine/core_client.py; Rust: run_output_dispatcher_loop closes
// every registry with the decode error as the health error, rust/src/engine-core-client/src/client/imp.rs).
// Here the routing fields are read without the full decode (readOutputRoute) to fail no more than the
// message concerns:
//
// - The message can be attributed when its msgpack structure is intact (every request id, finished id and
//   call id it names could be read) and the fault lies inside one request's output (`outputs[i]…`) or
//   inside a utility reply's failure_message / result. Then only the streams it names (outputs and
//   finished_requests) fail, or only the utility call it answers; the engine's other work goes on.
// - Anything else makes its engine dead at once, with the ProtocolError as the health error: broken msgpack,
//   a fault in a field every message of the engine shares (engine_index, timestamp, scheduler_stats,
//   finished_requests, the envelope, trailing bytes), or a shape vLLM never sends (request outputs and a
//   utility reply in one message). That is what a version mismatch looks like: the envelope or a field
//   that every message carries no longer matches, so every message fails the same way.
// - A version mismatch inside the per-request fields (a field of EngineCoreOutput changed) also fails every
//   message, but each one is attributable. So the REPEATED_FAULTS-th undecodable message from one engine
//   within REPEATED_FAULT_WINDOW_MS makes that engine dead too: one corrupt output costs its streams, an
//   engine whose wire differs is stopped after a few messages instead of failing request after request.
//
// The sender is the only engine that pushes to the socket the message came on (the default: one output socket
// per engine). On a socket several engines share, it is the engine the message's engine_index names, if
// that is one of them; otherwise nothing says which engine sent it and every live engine on that socket is
// failed, as for an ENGINE_CORE_DEAD sentinel nobody claims (transport/src/death-attribution.ts).
import { outputShapeProblem, ProtocolError, readOutputRoute } from "@vllm-engine-core/protocol";

/** This many undecodable messages from one engine within the window make it dead (see above). */
export const REPEATED_FAULTS = 3;
export const REPEATED_FAULT_WINDOW_MS = 10_000;

export type FaultVerdict =
  /** Fail the live requests of `engineIndex` among `requestIds`. */
  | { kind: "requests"; engineIndex: number; requestIds: string[]; error: ProtocolError }
  /** Fail the pending utility call `callId` on `engineIndex`. */
  | { kind: "utility"; engineIndex: number; callId: bigint; error: ProtocolError }
  /** These engines are dead, each with its error (its health error and what its work fails with). */
  | { kind: "engines"; errors: ProtocolError[] };

const EMPTY = new Uint8Array(0);
const OUTPUTS_FIELD = "EngineCoreOutputs.outputs[";
const UTILITY_FIELD = "EngineCoreOutputs.utility_output.";
const CALL_ID_FIELD = "EngineCoreOutputs.utility_output.call_id";

export class OutputFaultJudge {
  /** Times (performance.now()) of recent undecodable messages, per engine. */
  readonly #recent = new Map<number, number[]>();

  /**
   * Decides what `error` (the full decode's) costs. `liveSenders`: the engines that push to the socket the
   * message came on and are not dead yet (none: nothing is left to fail).
   */
  judge(error: ProtocolError, frames: readonly Uint8Array[], liveSenders: readonly number[]): FaultVerdict {
    const route = readOutputRoute(frames[0] ?? EMPTY);
    const engineIndex =
      liveSenders.length === 1 ? liveSenders[0] : liveSenders.find((index) => index === route.engineIndex);
    if (engineIndex === undefined) {
      return {
        kind: "engines",
        errors: liveSenders.map((index) => withOutcome(error, index, "engine-dead")),
      };
    }
    const repeated = this.#count(engineIndex) >= REPEATED_FAULTS;
    const field = error.field ?? "";
    const mixed =
      outputShapeProblem({
        requests: route.requestIds.length > 0 || route.finishedRequests !== null || route.hasSchedulerStats,
        utility: route.hasUtilityOutput,
        waveComplete: route.hasWaveComplete,
        startWave: route.hasStartWave,
      }) !== undefined;
    if (route.complete && !mixed && !repeated) {
      if (field.startsWith(OUTPUTS_FIELD)) {
        return {
          kind: "requests",
          engineIndex,
          requestIds: [...route.requestIds, ...(route.finishedRequests ?? [])],
          error: withOutcome(error, engineIndex, "requests-failed"),
        };
      }
      if (
        field.startsWith(UTILITY_FIELD) &&
        !field.startsWith(CALL_ID_FIELD) &&
        route.utilityCallId !== null
      ) {
        return {
          kind: "utility",
          engineIndex,
          callId: route.utilityCallId,
          error: withOutcome(error, engineIndex, "utility-call-failed"),
        };
      }
    }
    const note = repeated
      ? ` (${REPEATED_FAULTS} undecodable messages from this engine within ${REPEATED_FAULT_WINDOW_MS / 1000} s)`
      : "";
    return { kind: "engines", errors: [withOutcome(error, engineIndex, "engine-dead", note)] };
  }

  /** Records one undecodable message from `engineIndex`; returns how many fell within the window. */
  #count(engineIndex: number): number {
    const now = performance.now();
    const times = (this.#recent.get(engineIndex) ?? []).filter((t) => now - t < REPEATED_FAULT_WINDOW_MS);
    times.push(now);
    this.#recent.set(engineIndex, times);
    return times.length;
  }
}

function withOutcome(
  error: ProtocolError,
  engineIndex: number,
  outcome: NonNullable<ProtocolError["outcome"]>,
  note = "",
): ProtocolError {
  return new ProtocolError({
    struct: error.struct,
    field: error.field,
    detail: error.detail + note,
    direction: error.direction,
    engineIndex,
    outcome,
  });
}
