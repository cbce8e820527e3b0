// What a client lets stat loggers see: every engine's latest SchedulerStats and its listeners,
// and the per-output records of the requests this client streams (request-timings.ts).
import type { EngineCoreRequest, SchedulerStats } from "@vllm-engine-core/protocol";
import type { RuntimeConnection } from "@vllm-engine-core/runtime";
import { type OutputObserver, type OutputRecord, RequestTimingsRecorder } from "./request-timings.js";

export type SchedulerStatsListener = (engineIndex: number, stats: SchedulerStats) => void;
/** `sleep` 1 after a successful `sleep(level)`, 0 (level 0) after a successful `wakeUp()`. */
export type SleepStateListener = (sleep: 0 | 1, level: number) => void;

/** Calls each listener; one that throws does not stop the others (its error is rethrown on its own). */
function notifyAll<A extends unknown[]>(listeners: Iterable<(...args: A) => void>, ...args: A): void {
  for (const listener of [...listeners]) {
    try {
      listener(...args);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

export class ClientObservability {
  readonly #connection: RuntimeConnection;
  readonly #latest = new Map<number, SchedulerStats>();
  /** This client's stats subscriptions on the connection (whose listeners are the one list of them). */
  readonly #statsSubscriptions = new Set<() => void>();
  #closed = false;
  readonly #outputObservers = new Set<OutputObserver>();
  readonly #sleepListeners = new Set<SleepStateListener>();
  /** undefined without observers, so that streams skip building records. */
  #fanOut: OutputObserver | undefined;

  constructor(connection: RuntimeConnection) {
    this.#connection = connection;
    this.#statsSubscriptions.add(
      connection.onSchedulerStats((engineIndex, stats) => this.#latest.set(engineIndex, stats)),
    );
  }

  /** The client stopped: none of its listeners is called again. */
  close(): void {
    this.#closed = true;
    for (const unsubscribe of this.#statsSubscriptions) unsubscribe();
    this.#statsSubscriptions.clear();
  }

  schedulerStats(engineIndex: number): SchedulerStats | undefined {
    return this.#latest.get(engineIndex);
  }

  onSchedulerStats(listener: SchedulerStatsListener): () => void {
    if (this.#closed) return () => {};
    const unsubscribe = this.#connection.onSchedulerStats(listener);
    this.#statsSubscriptions.add(unsubscribe);
    return () => {
      unsubscribe();
      this.#statsSubscriptions.delete(unsubscribe);
    };
  }

  onSleepStateChange(listener: SleepStateListener): () => void {
    this.#sleepListeners.add(listener);
    return () => {
      this.#sleepListeners.delete(listener);
    };
  }

  /** What the engines now are, after a sleep or wake-up call they all answered (AsyncLLM.sleep / wake_up). */
  sleepStateChanged(sleep: 0 | 1, level: number): void {
    notifyAll(this.#sleepListeners, sleep, level);
  }

  observeOutputs(observer: OutputObserver): () => void {
    this.#outputObservers.add(observer);
    this.#updateFanOut();
    return () => {
      this.#outputObservers.delete(observer);
      this.#updateFanOut();
    };
  }

  /** The current observer (read per output by the streams). */
  readonly observer = (): OutputObserver | undefined => this.#fanOut;

  recorderFor(request: EngineCoreRequest): RequestTimingsRecorder {
    return new RequestTimingsRecorder(
      request.requestId,
      Number(request.arrivalTime), // a Float64 wrapper (exact encoding) converts to its value
      request.promptTokenIds?.length ?? 0,
      request.samplingParams?.maxTokens ?? null,
    );
  }

  #updateFanOut(): void {
    const observers = [...this.#outputObservers];
    if (observers.length === 0) this.#fanOut = undefined;
    else if (observers.length === 1) this.#fanOut = observers[0];
    else
      this.#fanOut = (record: OutputRecord) => {
        for (const observer of observers) observer(record);
      };
  }
}
