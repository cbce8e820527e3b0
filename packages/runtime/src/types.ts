// The public types of the runtime host API (see README.md).
import type {
  EngineCoreOutput,
  EngineCoreReadyResponse,
  EngineCoreRequest,
  ProtocolError,
  SchedulerStats,
  UtilityOutput,
} from "@vllm-engine-core/protocol";

/** Structured-cloneable token: post it to another thread and call attachConnection(handle) there. */
export interface ConnectionHandle {
  readonly connectionId: string;
  readonly __vllmConnectionHandle: 1;
}

export interface ConnectionInfo {
  inputAddress: string;
  /** The first engine's output address (see `engines[].outputAddress`). */
  outputAddress: string;
  /**
   * In engine (identity) order. `outputAddress` is the PULL endpoint the engine pushes to: its own in
   * handshake-owner mode with the default output bind (so an ENGINE_CORE_DEAD sentinel names its engine),
   * otherwise the one every engine shares.
   */
  engines: { index: number; outputAddress: string; readyResponse: EngineCoreReadyResponse }[];
  clientIndex: number;
  modelName?: string;
}

/**
 * What the runtime dropped from the engines' output since the connection opened, and what undecodable
 * messages cost. Everything but `outputsAfterAbort` is an engine anomaly and is also logged as a process
 * warning from the runtime thread (codes VLLM_UNDECODABLE_OUTPUT, VLLM_STRAY_OUTPUT,
 * VLLM_UNKNOWN_UTILITY_REPLY): the first at once, then at most one "N more like this" summary per kind every 10 s.
 */
export interface ConnectionDiagnostics {
  /**
   * Output messages that could not be decoded (garbage, aux index out of range, a shape vLLM never sends …),
   * or 2+ frames starting with the ENGINE_CORE_DEAD sentinel. None is delivered; what each one failed is
   * counted below (see the README: the streams it names, the utility call it answers, or its engine).
   */
  undecodableOutputMessages: number;
  /** Streams failed with a ProtocolError: named by an undecodable message, or of an engine one made dead. */
  requestsFailedByProtocolError: number;
  /** Utility calls failed with a ProtocolError (their reply could not be decoded, or their engine died of one). */
  utilityCallsFailedByProtocolError: number;
  /** Engines treated as dead because of undecodable output (see the README for the rule). */
  enginesDeadByProtocolError: number;
  /** Outputs for a request after it was aborted: the engine had them in flight (normal; not logged). */
  outputsAfterAbort: number;
  /** Outputs for a request after its final output (a second finish, more tokens …). */
  outputsAfterFinish: number;
  /**
   * Outputs for a request id this connection does not know: never sent, or ended so long ago (more than
   * 16,384 requests back) that it is no longer remembered.
   */
  outputsForUnknownRequests: number;
  /** Utility replies for a call id nobody waits for (or from another engine than the one called); dropped. */
  unknownUtilityReplies: number;
  /**
   * Utility replies that came after their call timed out or was aborted (`timeoutMs` / `signal`); dropped,
   * never delivered to another call. Expected after a timeout, so not logged.
   */
  lateUtilityReplies: number;
  /** Why the latest undecodable message was rejected (with `engineIndex` and `outcome`), or null. */
  lastProtocolError: ProtocolError | null;
}

/**
 * Receives one request's outputs on the thread that submitted it. Exactly one of `output` with a
 * finishReason, `aborted` or `fail` ends it; nothing is called after that.
 */
export interface RequestSink {
  /** One engine step's output for this request, in order; the last one carries finishReason. */
  output(output: EngineCoreOutput, engineIndex: number, timestamp: number): void;
  /**
   * A client aborted the request (RuntimeConnection.abort, on this thread or another): the engine sends no
   * final output for it, so this is the end.
   */
  aborted(engineIndex: number): void;
  /**
   * EngineDeadError / ProtocolError (an undecodable output named the request or killed its engine) /
   * RuntimeCrashedError / ClientClosedError / RequestStreamClosedError.
   */
  fail(error: Error): void;
}

/** Bounds of one utility call. Without either it waits as long as the engines take (like vLLM). */
export interface UtilityCallOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface RuntimeConnection {
  readonly info: ConnectionInfo;
  readonly handle: ConnectionHandle;
  /**
   * Registers the request, picks its engine (explicit dataParallelRank, else least in-flight requests,
   * ties to the lowest identity) and sends ADD; a failed send rolls the registration back.
   */
  submit(
    request: EngineCoreRequest,
    sink: RequestSink,
    options?: { owner?: object },
  ): Promise<{ engineIndex: number }>;
  /**
   * Aborts the requests that are still live and returns their ids. Their sinks end with `aborted`: at once
   * on this thread, as soon as the runtime tells them on other threads.
   */
  abort(requestIds: readonly string[]): Promise<string[]>;
  /**
   * Registers `owner` (e.g. one of several clients sharing the connection on this thread) as a user of the
   * connection on this thread; `release(owner)` undoes it.
   */
  retain(owner: object): void;
  /**
   * Ends this thread's live requests that were submitted with `owner`: their sinks fail with `error` and the
   * requests are aborted on their engines. When `owner` was the last retained owner of this thread, the
   * thread then detaches (as `detach()`); otherwise the connection stays attached.
   */
  release(owner: object, error: Error): Promise<void>;
  /**
   * Calls `method` on every engine; one result per engine, in engine order. With `timeoutMs` (a positive
   * finite number of ms, at most 2^31 - 1) it rejects with UtilityTimeoutError when some engine has not
   * answered by then; with `signal` it rejects with the signal's reason when aborted. Either way the call is
   * forgotten and a later reply is dropped (`lateUtilityReplies`).
   */
  callUtility(
    method: string,
    args: readonly unknown[],
    options?: UtilityCallOptions,
  ): Promise<{ engineIndex: number; output: UtilityOutput }[]>;
  /** Counters of dropped output messages (see ConnectionDiagnostics). */
  diagnostics(): Promise<ConnectionDiagnostics>;
  /** The first health error (engine dead, runtime crashed, connection closed), if any. */
  readonly healthError: Error | undefined;
  /** Called once, with the first health error; returns the unsubscribe function. */
  onHealthChange(listener: (error: Error) => void): () => void;
  /**
   * Called with every engine's SchedulerStats (engines that log stats send them once per step, on their
   * output batches or alone); returns the unsubscribe function.
   */
  onSchedulerStats(listener: (engineIndex: number, stats: SchedulerStats) => void): () => void;
  /** This thread stops using the connection; its live requests are aborted. Other threads keep it. */
  detach(): Promise<void>;
  /** Closes the connection for every thread: sockets closed, every live request fails with ClientClosedError. */
  shutdown(): Promise<void>;
}
