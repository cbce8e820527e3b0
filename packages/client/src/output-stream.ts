// The per-request output stream: an async iterator over the engine's per-step deltas.
//
// Memory of a slow consumer grows with the tokens it has not read, not with one wrapper object
// per engine step: consecutive plain token deltas that nobody has read yet are merged into the
// newest unread one (the engine's outputs are deltas, so merging keeps their meaning).
import type { EngineCoreOutput } from "@vllm-engine-core/protocol";
import { isLocalAbort } from "@vllm-engine-core/runtime";
import { ConcurrentReadError } from "./errors.js";
import type { OutputObserver, RequestTimings, RequestTimingsRecorder } from "./request-timings.js";

export interface StreamController {
  /** Called once when the consumer leaves before the final output: abort on the engine. */
  abandon(requestId: string, reason: unknown): void;
}

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

export class EngineCoreOutputStream implements AsyncIterableIterator<EngineCoreOutput> {
  readonly requestId: string;
  /** Engine that serves this request. */
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
  readonly #controller: StreamController;
  readonly #onSettled: () => void;

  readonly #timings: RequestTimingsRecorder | undefined;
  readonly #observer: (() => OutputObserver | undefined) | undefined;

  constructor(
    requestId: string,
    engineIndex: number,
    controller: StreamController,
    onSettled: () => void,
    timings?: { recorder: RequestTimingsRecorder; observer: () => OutputObserver | undefined },
  ) {
    this.requestId = requestId;
    this.engineIndex = engineIndex;
    this.#controller = controller;
    this.#onSettled = onSettled;
    this.#timings = timings?.recorder;
    this.#observer = timings?.observer;
  }

  /**
   * The request's timings as vLLM's frontend derives them (TTFT, inter-token latencies, queue, prefill,
   * decode, inference and end-to-end times, token counts, finish reason; see RequestTimings). Final once
   * the stream ended; undefined for a stream not made by EngineCoreClient.call.
   */
  get timings(): RequestTimings | undefined {
    return this.#timings?.snapshot();
  }

  /** True once the final output (or a failure) was received; nothing more will arrive. */
  get settled(): boolean {
    return this.#finished || this.#hasError;
  }

  /** @internal Delivers one engine step's output for this request. */
  push(output: EngineCoreOutput, timestamp: number): void {
    if (this.#finished || this.#closed || this.#hasError) return;
    const timings = this.#timings;
    if (timings !== undefined) {
      timings.engineIndex = this.engineIndex;
      if (isLocalAbort(output)) timings.endLocally("abort");
      else timings.observe(output, timestamp, this.#observer!());
    }
    const final = output.finishReason != null;
    if (final) {
      this.#finished = true;
      this.#onSettled();
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

  /** @internal Ends the stream with an error after the outputs already queued. */
  fail(error: unknown): void {
    if (this.#finished || this.#hasError || this.#closed) return;
    this.#timings?.endLocally(null);
    this.#hasError = true;
    this.#error = error;
    this.#onSettled();
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

  /** @internal Used for the request's AbortSignal: abort on the engine, reject the pending or next read. */
  abandonWith(reason: unknown): void {
    if (this.settled || this.#closed) return;
    this.#abandon(reason);
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
  #abandon(reason: unknown): void {
    const wasSettled = this.settled;
    this.#closed = true;
    this.#queue = [];
    this.#stamps = [];
    this.#head = 0;
    if (!wasSettled) {
      this.#timings?.endLocally("abort");
      this.#finished = true;
      this.#onSettled();
      this.#controller.abandon(this.requestId, reason);
    }
  }

  /** Leaving early (`break`, `return()`) aborts the request on the engine. */
  return(): Promise<IteratorResult<EngineCoreOutput>> {
    this.#abandon(undefined);
    const waiter = this.#waiter;
    if (waiter !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
