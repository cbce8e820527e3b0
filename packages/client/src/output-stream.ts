// The per-request output stream as its reader sees it: an async iterator over the engine's per-step
// deltas. Only EngineCoreClient.call makes one. What feeds it (the runtime connection, through
// RequestSink) and what the client does with it (the call's AbortSignal, the engine it picked) go to the
// RequestOutputs behind it, which is not exported: a reader can read, leave early (`return()`) or finish
// the request itself (`finish`), and nothing else.
import type { EngineCoreOutput, FinishReasonName } from "@vllm-engine-core/protocol";
import { RequestOutputs } from "./request-outputs.js";
import type { OutputObserver, RequestTimings, RequestTimingsRecorder } from "./request-timings.js";

let wrap: (outputs: RequestOutputs) => EngineCoreOutputStream;

/** One request's outputs, from `EngineCoreClient.call`. */
export class EngineCoreOutputStream implements AsyncIterableIterator<EngineCoreOutput> {
  readonly #outputs: RequestOutputs;

  static {
    wrap = (outputs) => new EngineCoreOutputStream(outputs);
  }

  private constructor(outputs: RequestOutputs) {
    this.#outputs = outputs;
  }

  get requestId(): string {
    return this.#outputs.requestId;
  }

  /** The engine that serves this request. */
  get engineIndex(): number {
    return this.#outputs.engineIndex;
  }

  /** `EngineCoreOutputs.timestamp` of the batch that carried the last output handed out. */
  get lastTimestamp(): number {
    return this.#outputs.lastTimestamp;
  }

  /**
   * The request's timings as vLLM's frontend derives them (TTFT, inter-token latencies, queue, prefill,
   * decode, inference and end-to-end times, token counts, finish reason; see RequestTimings). Final once
   * the stream ended.
   */
  get timings(): RequestTimings {
    return this.#outputs.timings;
  }

  next(): Promise<IteratorResult<EngineCoreOutput>> {
    return this.#outputs.next();
  }

  /** Leaving early (`break`, `return()`) aborts the request on the engine; it counts as aborted. */
  return(): Promise<IteratorResult<EngineCoreOutput>> {
    return this.#outputs.return();
  }

  /**
   * The reader finished the request before the engine did — its own stop condition matched, such as a
   * stop string in the decoded text (`@vllm-engine-core/text` calls this). The stream ends as with
   * `return()` and the request is aborted on the engine, but it counts as finished with `finishReason`
   * (`timings.finishedBy` is `"frontend"`; output observers such as `@vllm-engine-core/metrics` record one
   * finished request), as vLLM's output processor finishes a request on a stop string, then aborts it in
   * the engine. After the final output arrived (or the stream failed) it only ends the stream, like
   * `return()`: the request's outcome stays the engine's.
   */
  finish(finishReason: Exclude<FinishReasonName, "abort"> = "stop"): void {
    this.#outputs.finish(finishReason);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * A new request's stream and what feeds it: `outputs` is the request's RequestSink for the runtime
 * connection and the client's handle on it; `stream` is what the caller gets.
 *
 * @internal
 */
export function openOutputStream(
  requestId: string,
  abortOnEngine: (requestId: string) => void,
  timings: { recorder: RequestTimingsRecorder; observer: () => OutputObserver | undefined },
): { stream: EngineCoreOutputStream; outputs: RequestOutputs } {
  const outputs = new RequestOutputs(requestId, abortOnEngine, timings);
  return { stream: wrap(outputs), outputs };
}
