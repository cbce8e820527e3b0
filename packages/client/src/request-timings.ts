// Per-request timings as vLLM's frontend derives them (vllm/v1/metrics/stats.py RequestStateStats,
// IterationStats.update_from_output / update_from_events / update_from_finished_request, fed by
// vllm/v1/engine/output_processor.py process_outputs):
//  - arrival: the request's arrival_time (frontend wall clock); TTFT and e2e are measured from it on this
//    thread's wall clock when the output arrives (IterationStats.iteration_timestamp = time.time());
//  - queued / scheduled: the engine's QUEUED and first SCHEDULED events (sent when the engine logs stats);
//  - first / last token: the `timestamp` of the output batch that carried the request's first / latest
//    tokens (engine monotonic clock), so queue, prefill, decode, inference and inter-token times are
//    intervals on the engine's clock. An engine that does not log stats sends no events: then every instant
//    is this thread's clock (`clock: "local"`; queued = scheduled = submit time, so the queue time is 0).
import {
  EngineCoreEventType,
  type EngineCoreOutput,
  type FinishReasonName,
  finishReasonName,
  type PrefillStats,
} from "@vllm-engine-core/protocol";

/** The timings of one request; final once its stream ended (see EngineCoreOutputStream.timings). */
export interface RequestTimings {
  readonly requestId: string;
  readonly engineIndex: number;
  /** "engine": events and batch timestamps from an engine that logs stats; "local": this thread's clock. */
  readonly clock: "engine" | "local";
  /** EngineCoreRequest.arrivalTime (seconds since the epoch). */
  readonly arrivalTime: number;
  /** Instants in seconds on `clock` (0 until they happened). */
  readonly queuedTs: number;
  readonly scheduledTs: number;
  readonly firstTokenTs: number;
  readonly lastTokenTs: number;
  /** Time to first token from arrival (seconds); null before the first output. */
  readonly timeToFirstToken: number | null;
  /** One per output after the first (seconds between the batches that carried them). */
  readonly interTokenLatencies: readonly number[];
  /** Set when the request finished (seconds): queued→scheduled, scheduled→first token, first→last token, scheduled→last token, arrival→finish. */
  readonly queuedTime: number | null;
  readonly prefillTime: number | null;
  readonly decodeTime: number | null;
  readonly inferenceTime: number | null;
  readonly e2eLatency: number | null;
  /** decodeTime / (generation tokens - 1), 0 with at most one token (FinishedRequestStats). */
  readonly meanTimePerOutputToken: number | null;
  readonly numPromptTokens: number;
  readonly numGenerationTokens: number;
  /** PrefillStats.num_cached_tokens of the first output (0 without). */
  readonly numCachedTokens: number;
  /** PREEMPTED events seen. */
  readonly numPreemptions: number;
  /** SamplingParams.max_tokens as sent (null for pooling requests or when unset). */
  readonly maxTokens: number | null;
  readonly finishReason: FinishReasonName | null;
  /**
   * "engine": the engine sent the final output; "frontend": the reader finished it (its stop condition
   * matched, e.g. a stop string: `EngineCoreOutputStream.finish`), counted like an engine finish as vLLM's output processor does;
   * "client": aborted here or failed (vLLM records no finish stats then).
   */
  readonly finishedBy: "engine" | "frontend" | "client" | null;
}

/**
 * What one output contributed to its engine's iteration (IterationStats), for stat loggers. The object is
 * reused for the request's next output: read it during the call, do not keep it.
 */
export interface OutputRecord {
  readonly engineIndex: number;
  /** EngineCoreOutputs.timestamp of the batch. */
  readonly batchTimestamp: number;
  readonly newTokens: number;
  /** Seconds, on the request's first output; NaN on later ones (a number either way: no boxing per output). */
  readonly timeToFirstToken: number;
  readonly prefillStats: PrefillStats | null;
  /** Seconds, on later outputs; NaN on the first. */
  readonly interTokenLatency: number;
  readonly preemptions: number;
  /** Set when this output finished the request on the engine. */
  readonly finished: RequestTimings | null;
}

export type OutputObserver = (record: OutputRecord) => void;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Wall clock with sub-millisecond resolution (Date.now() has 1 ms), seconds. */
export function wallSeconds(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

let iterationNow = 0;
let iterationNowValid = false;
const endIteration = () => {
  iterationNowValid = false;
};

/**
 * The clock read once per delivery (the outputs of one engine message reach their streams in one synchronous
 * run): IterationStats.iteration_timestamp, one time.time() per EngineCoreOutputs in vLLM.
 */
function iterationSeconds(): number {
  if (!iterationNowValid) {
    iterationNow = wallSeconds();
    iterationNowValid = true;
    queueMicrotask(endIteration);
  }
  return iterationNow;
}

/**
 * An append-only list of numbers in fixed typed-array chunks (16, 32, … up to 4,096 entries): appending
 * never copies what is there and leaves nothing for the GC to trace, where a growing JS array of a long
 * request's inter-token latencies is copied at each growth (measured: 41 → 8 ns per append at 1,024 live
 * requests, /tmp micro-benchmark of both).
 * @internal exported for its test
 */
export class SampleLog {
  readonly #full: Float64Array[] = [];
  #chunk: Float64Array | undefined;
  #used = 0;

  add(value: number): void {
    let chunk = this.#chunk;
    if (chunk === undefined || this.#used === chunk.length) {
      if (chunk !== undefined) this.#full.push(chunk);
      chunk = new Float64Array(chunk === undefined ? 16 : Math.min(chunk.length * 2, 4_096));
      this.#chunk = chunk;
      this.#used = 0;
    }
    chunk[this.#used++] = value;
  }

  toArray(): number[] {
    const out: number[] = [];
    for (const chunk of this.#full) for (let i = 0; i < chunk.length; i++) out.push(chunk[i]!);
    const last = this.#chunk;
    if (last !== undefined) for (let i = 0; i < this.#used; i++) out.push(last[i]!);
    return out;
  }
}

export class RequestTimingsRecorder {
  readonly #requestId: string;
  /** The engine that serves the request: the one of its outputs, or the one the client was told on abort. */
  #engineIndex = -1;
  readonly #arrivalTime: number;
  readonly #numPromptTokens: number;
  readonly #maxTokens: number | null;
  readonly #submittedAt = wallSeconds();
  #clock: "engine" | "local" = "local";
  #queuedTs = 0;
  #scheduledTs = 0;
  #firstTokenTs = 0;
  #lastTokenTs = 0;
  #ttft: number | null = null;
  readonly #itls = new SampleLog();
  #numGenerationTokens = 0;
  #numCachedTokens = 0;
  #numPreemptions = 0;
  #prefilling = true;
  #end: { reason: FinishReasonName | null; by: "engine" | "frontend" | "client"; at: number } | undefined;
  #snapshot: RequestTimings | undefined;
  #record: Mutable<OutputRecord> | undefined;

  constructor(requestId: string, arrivalTime: number, numPromptTokens: number, maxTokens: number | null) {
    this.#requestId = requestId;
    this.#arrivalTime = arrivalTime;
    this.#numPromptTokens = numPromptTokens;
    this.#maxTokens = maxTokens;
  }

  /** One output of the engine, in order; `observer` (stat loggers) gets its iteration contribution. */
  observe(
    output: EngineCoreOutput,
    engineIndex: number,
    batchTimestamp: number,
    observer: OutputObserver | undefined,
  ): void {
    this.#engineIndex = engineIndex;
    const now = iterationSeconds();
    this.#snapshot = undefined;
    const prefilling = this.#prefilling;
    const events = output.events;
    if (prefilling && events !== null && events.length > 0) this.#clock = "engine";
    let preemptions = 0;
    if (events !== null) {
      for (const event of events) {
        if (event.type === EngineCoreEventType.QUEUED) this.#queuedTs = event.timestamp;
        else if (event.type === EngineCoreEventType.SCHEDULED) {
          if (this.#scheduledTs === 0) this.#scheduledTs = event.timestamp; // ignore preemptions
        } else if (event.type === EngineCoreEventType.PREEMPTED) preemptions++;
      }
    }
    this.#numPreemptions += preemptions;
    const stamp = this.#clock === "engine" ? batchTimestamp : now;
    const newTokens = output.newTokenIds.length;
    this.#numGenerationTokens += newTokens;
    let ttft = Number.NaN;
    let itl = Number.NaN;
    let prefillStats: PrefillStats | null = null;
    if (prefilling) {
      ttft = now - this.#arrivalTime;
      this.#ttft = ttft;
      this.#firstTokenTs = stamp;
      prefillStats = output.prefillStats;
      if (prefillStats !== null) this.#numCachedTokens = prefillStats.numCachedTokens;
      if (this.#clock === "local") {
        this.#queuedTs = this.#submittedAt;
        this.#scheduledTs = this.#submittedAt;
      }
      this.#prefilling = false;
    } else {
      itl = stamp - this.#lastTokenTs;
      this.#itls.add(itl);
    }
    this.#lastTokenTs = stamp;
    let finished: RequestTimings | null = null;
    if (output.finishReason !== null && this.#end === undefined) {
      this.#end = { reason: finishReasonName(output.finishReason), by: "engine", at: now };
      finished = this.snapshot();
    }
    if (observer === undefined) return;
    const record = this.#reusedRecord();
    record.engineIndex = this.#engineIndex;
    record.batchTimestamp = batchTimestamp;
    record.newTokens = newTokens;
    record.timeToFirstToken = ttft;
    record.prefillStats = prefillStats;
    record.interTokenLatency = itl;
    record.preemptions = preemptions;
    record.finished = finished;
    observer(record);
  }

  /** One record per request, refilled per output: no allocation per output on the hot path. */
  #reusedRecord(): Mutable<OutputRecord> {
    this.#record ??= {
      engineIndex: 0,
      batchTimestamp: 0.5,
      newTokens: 0,
      timeToFirstToken: 0.5,
      prefillStats: null,
      interTokenLatency: 0.5,
      preemptions: 0,
      finished: null,
    };
    return this.#record;
  }

  /**
   * The frontend finished the request before the engine did (a stop string matched in the text layer): the
   * finish is recorded as vLLM's output processor records it (`_update_stats_from_finished`, then the
   * engine request is aborted, which counts nothing), and `observer` sees it as a record with no new tokens.
   */
  finishByFrontend(
    reason: FinishReasonName,
    batchTimestamp: number,
    observer: OutputObserver | undefined,
  ): void {
    if (this.#end !== undefined) return;
    this.#snapshot = undefined;
    this.#end = { reason, by: "frontend", at: wallSeconds() };
    if (observer === undefined) return;
    const record = this.#reusedRecord();
    record.engineIndex = this.#engineIndex;
    record.batchTimestamp = batchTimestamp;
    record.newTokens = 0;
    record.timeToFirstToken = Number.NaN;
    record.prefillStats = null;
    record.interTokenLatency = Number.NaN;
    record.preemptions = 0;
    record.finished = this.snapshot();
    observer(record);
  }

  /**
   * The request ended here: aborted by this client (`reason` "abort") or failed (null). `engineIndex`: the
   * engine the client knows serves it, if any (-1: not known yet; a request aborted before any output).
   */
  endLocally(reason: FinishReasonName | null, engineIndex = -1): void {
    if (this.#end !== undefined) return;
    if (engineIndex >= 0) this.#engineIndex = engineIndex;
    this.#snapshot = undefined;
    this.#end = { reason, by: "client", at: wallSeconds() };
  }

  snapshot(): RequestTimings {
    if (this.#snapshot !== undefined) return this.#snapshot;
    const end = this.#end;
    const done = end !== undefined && this.#ttft !== null;
    const decodeTime = done ? this.#lastTokenTs - this.#firstTokenTs : null;
    const gen = this.#numGenerationTokens;
    this.#snapshot = Object.freeze({
      requestId: this.#requestId,
      engineIndex: this.#engineIndex,
      clock: this.#clock,
      arrivalTime: this.#arrivalTime,
      queuedTs: this.#queuedTs,
      scheduledTs: this.#scheduledTs,
      firstTokenTs: this.#firstTokenTs,
      lastTokenTs: this.#lastTokenTs,
      timeToFirstToken: this.#ttft,
      interTokenLatencies: Object.freeze(this.#itls.toArray()),
      queuedTime: done ? this.#scheduledTs - this.#queuedTs : null,
      prefillTime: done ? this.#firstTokenTs - this.#scheduledTs : null,
      decodeTime,
      inferenceTime: done ? this.#lastTokenTs - this.#scheduledTs : null,
      e2eLatency: end === undefined ? null : end.at - this.#arrivalTime,
      meanTimePerOutputToken: decodeTime === null ? null : gen - 1 > 0 ? decodeTime / (gen - 1) : 0,
      numPromptTokens: this.#numPromptTokens,
      numGenerationTokens: gen,
      numCachedTokens: this.#numCachedTokens,
      numPreemptions: this.#numPreemptions,
      maxTokens: this.#maxTokens,
      finishReason: end?.reason ?? null,
      finishedBy: end?.by ?? null,
    });
    return this.#snapshot;
  }
}
