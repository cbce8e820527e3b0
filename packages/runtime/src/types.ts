// The public types of the runtime host API (see README.md).
import type {
  EngineCoreOutput,
  EngineCoreReadyResponse,
  EngineCoreRequest,
  UtilityOutput,
} from "@vllm-engine-core/protocol";

/** Structured-cloneable token: post it to another thread and call attachConnection(handle) there. */
export interface ConnectionHandle {
  readonly connectionId: string;
  readonly __vllmConnectionHandle: 1;
}

export interface ConnectionInfo {
  inputAddress: string;
  outputAddress: string;
  engines: { index: number; readyResponse: EngineCoreReadyResponse }[];
  clientIndex: number;
  modelName?: string;
}

/** Receives one request's outputs on the thread that submitted it, once per engine step (batched). */
export interface RequestSink {
  /** The outputs of one engine step for this request; the last one may carry finishReason. */
  outputs(batch: EngineCoreOutput[], meta: { engineIndex: number; timestamp: number }): void;
  /** EngineDeadError / RuntimeCrashedError / ClientClosedError / RequestStreamClosedError. Called at most once. */
  fail(error: Error): void;
}

export interface RuntimeConnection {
  readonly info: ConnectionInfo;
  readonly handle: ConnectionHandle;
  /**
   * Registers the request, picks its engine (explicit dataParallelRank, else least in-flight requests,
   * ties to the lowest identity) and sends ADD; a failed send rolls the registration back.
   */
  submit(request: EngineCoreRequest, sink: RequestSink): Promise<{ engineIndex: number }>;
  /**
   * Aborts the requests that are still live and returns their ids. The sinks of this thread stop receiving
   * anything at once; with `notify` they first get a final output with finishReason ABORT. Sinks of other
   * threads always get that final ABORT output.
   */
  abort(requestIds: readonly string[], options?: { notify?: boolean }): Promise<string[]>;
  /** Calls `method` on every engine; one result per engine, in engine order. */
  callUtility(
    method: string,
    args: readonly unknown[],
  ): Promise<{ engineIndex: number; output: UtilityOutput }[]>;
  /** The first health error (engine dead, runtime crashed, connection closed), if any. */
  readonly healthError: Error | undefined;
  /** Called once, with the first health error; returns the unsubscribe function. */
  onHealthChange(listener: (error: Error) => void): () => void;
  /** This thread stops using the connection; its live requests are aborted. Other threads keep it. */
  detach(): Promise<void>;
  /** Closes the connection for every thread: sockets closed, every live request fails with ClientClosedError. */
  shutdown(): Promise<void>;
}
