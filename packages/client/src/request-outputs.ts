// What feeds one request's output stream and what its client does with it (internal: the public,
// read-only side is EngineCoreOutputStream in output-stream.ts, which wraps one of these).
//
// Memory of a slow consumer grows with the tokens it has not read, not with one wrapper object
// per engine step: consecutive plain token deltas that nobody has read yet are merged into the
// newest unread one (the engine's outputs are deltas, so merging keeps their meaning).
import { type EngineCoreOutput, FinishReason, type FinishReasonName } from "@vllm-engine-core/protocol";
import type { RequestSink } from "@vllm-engine-core/runtime";
import { ConcurrentReadError } from "./errors.js";
import type { OutputObserver, RequestTimings, RequestTimingsRecorder } from "./request-timings.js";

type Waiter = { resolve: (r: IteratorResult<EngineCoreOutput>) => void; reject: (e: unknown) => void };

/** True when the output carries nothing but new tokens, so it can be merged with a neighbour. */
function isPlainDelta(o: EngineCoreOutput): boolean {
  return (
    o.finishReason == null &&
    o.newLogprobs == null &&
    o.newPromptLogprobsTensors == null &&
    o.poolingOutput == null &&
    o.stopReason == null &&
    o.events == null &&
    o.kvTransferParams == null &&
    o.ecTransferParams == null &&
    o.traceHeaders == null &&
    o.prefillStats == null &&
    o.routedExperts == null &&
    !o.numNansInLogits
  );
}

/**
 * One request's outputs, as the runtime connection delivers them (this is the request's RequestSink) and as
 * its EngineCoreOutputStream reads them.
 *
 * @internal
 */
export class RequestOutputs implements RequestSink {
  readonly requestId: string;
  /** Engine that serves this request (-1 until the client knows it). */
  engineIndex: number;
  /** `EngineCoreOutputs.timestamp` of the batch that carried the last output handed out. */
  lastTimestamp = 0;

  #queue: EngineCoreOutput[] = [];
  #stamps: number[] = [];
  #head = 0;
  #tailMergeable = false;
  #waiter: Waiter | undefined;
  #finished = false; // final output received (or locally finalised)
  #closed = false; // iterator will yield nothing more after the queue drains
  #error: unknown;
  #hasError = false;
  /** Aborts the request on its engine when the reader leaves before the end (see #abandon). */
  readonly #abortOnEngine: (requestId: string) => void;
  #onSettled: (() => void) | undefined;

  readonly #timings: RequestTimingsRecorder;
  readonly #observer: () => OutputObserver | undefined;

  constructor(
    requestId: string,
    abortOnEngine: (requestId: string) => void,
    timings: { recorder: RequestTimingsRecorder; observer: () => OutputObserver | undefined },
  ) {
    this.requestId = requestId;
    this.engineIndex = -1;
    this.#abortOnEngine = abortOnEngine;
    this.#timings = timings.recorder;
    this.#observer = timings.observer;
  }

  /** Called once when the stream settles (final output, failure, abort or abandon). */
  onSettled(action: () => void): void {
    this.#onSettled = action;
  }

  #settle(): void {
    const action = this.#onSettled;
    this.#onSettled = undefined;
    action?.();
  }

  get timings(): RequestTimings {
    return this.#timings.snapshot();
  }

  /** True once the final output (or a failure) was received; nothing more will arrive. */
  get settled(): boolean {
    return this.#finished || this.#hasError;
  }

  /** RequestSink: one engine step's output for this request. */
  output(output: EngineCoreOutput, engineIndex: number, timestamp: number): void {
    if (this.#finished || this.#closed || this.#hasError) return;
    this.#timings.observe(output, engineIndex, timestamp, this.#observer());
    this.#push(output, timestamp);
  }

  /** RequestSink: a client aborted the request; it ends with a final ABORT output. */
  aborted(engineIndex: number): void {
    if (this.#finished || this.#closed || this.#hasError) return;
    if (engineIndex >= 0) this.engineIndex = engineIndex;
    this.#timings.endLocally("abort", this.engineIndex);
    this.#push(abortOutput(this.requestId), Date.now() / 1000);
  }

  #push(output: EngineCoreOutput, timestamp: number): void {
    const final = output.finishReason != null;
    if (final) {
      this.#finished = true;
      this.#settle();
    }
    const waiter = this.#waiter;
    if (waiter !== undefined && this.#head === this.#queue.length) {
      this.#waiter = undefined;
      this.lastTimestamp = timestamp;
      if (final) this.#closed = true;
      waiter.resolve({ value: output, done: false });
      return;
    }
    const plain = !final && isPlainDelta(output);
    if (plain && this.#tailMergeable && this.#head < this.#queue.length) {
      const tail = this.#queue[this.#queue.length - 1]!;
      for (const t of output.newTokenIds) tail.newTokenIds.push(t);
      this.#stamps[this.#stamps.length - 1] = timestamp;
      return;
    }
    this.#queue.push(output);
    this.#stamps.push(timestamp);
    this.#tailMergeable = plain;
  }

  /** RequestSink: ends the stream with an error after the outputs already queued. */
  fail(error: unknown): void {
    if (this.#finished || this.#hasError || this.#closed) return;
    this.#timings.endLocally(null);
    this.#hasError = true;
    this.#error = error;
    this.#settle();
    const waiter = this.#waiter;
    if (waiter !== undefined && this.#head === this.#queue.length) {
      this.#waiter = undefined;
      this.#closed = true;
      waiter.reject(error);
    }
  }

  next(): Promise<IteratorResult<EngineCoreOutput>> {
    if (this.#head < this.#queue.length) {
      const value = this.#queue[this.#head]!;
      this.lastTimestamp = this.#stamps[this.#head]!;
      this.#queue[this.#head] = undefined as unknown as EngineCoreOutput;
      this.#head++;
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#stamps = [];
        this.#head = 0;
        this.#tailMergeable = false;
      }
      if (value.finishReason != null) this.#closed = true;
      return Promise.resolve({ value, done: false });
    }
    if (this.#hasError && !this.#closed) {
      this.#closed = true;
      return Promise.reject(this.#error);
    }
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    if (this.#waiter !== undefined) {
      return Promise.reject(new ConcurrentReadError(this.requestId));
    }
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** The request's AbortSignal fired: abort on the engine, reject the pending or next read. */
  abandonWith(reason: unknown): void {
    if (this.settled || this.#closed) return;
    this.#abandon();
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.reject(reason);
    } else {
      // The next read reports why the stream ended, once.
      this.#hasError = true;
      this.#error = reason;
      this.#closed = false;
    }
  }

  /** Drops what is queued, marks the stream over and asks the engine to abort the request. */
  #abandon(): void {
    const wasSettled = this.settled;
    this.#closed = true;
    this.#queue = [];
    this.#stamps = [];
    this.#head = 0;
    if (!wasSettled) {
      this.#timings.endLocally("abort");
      this.#finished = true;
      this.#settle();
      this.#abortOnEngine(this.requestId);
    }
  }

  /**
   * The reader finished the request (a stop string matched in the text it decoded): ends the stream like
   * `return()`, which aborts the request on the engine, but the request counts as finished with
   * `finishReason` in its timings and for output observers (metrics), not as aborted — as vLLM's output
   * processor finishes it and returns it in `reqs_to_abort` (vllm/v1/engine/output_processor.py
   * `process_outputs`).
   */
  finish(finishReason: FinishReasonName): void {
    if (!this.settled && !this.#closed) {
      this.#timings.finishByFrontend(finishReason, this.lastTimestamp, this.#observer());
    }
    void this.return();
  }

  /** Leaving early (`break`, `return()`) aborts the request on the engine. */
  return(): Promise<IteratorResult<EngineCoreOutput>> {
    this.#abandon();
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }
}

/** The final output of a stream a client aborted (the engine sends none for a client abort). */
function abortOutput(requestId: string): EngineCoreOutput {
  return {
    requestId,
    newTokenIds: [],
    newLogprobs: null,
    newPromptLogprobsTensors: null,
    poolingOutput: null,
    finishReason: FinishReason.ABORT,
    stopReason: null,
    events: null,
    kvTransferParams: null,
    ecTransferParams: null,
    traceHeaders: null,
    prefillStats: null,
    routedExperts: null,
    numNansInLogits: 0,
  };
}
