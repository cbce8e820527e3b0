// The public client. It runs on the caller's thread and never touches a socket: every engine
// interaction goes through the runtime host (@vllm-engine-core/runtime), whose dedicated worker
// thread owns the ZeroMQ sockets, the request registry and the engine selection.
import {
  ClientClosedError,
  DuplicateRequestIdError,
  type EngineCoreOutput,
  type EngineCoreReadyResponse,
  InconsistentUtilityResultsError,
  InvalidRequestError,
  type LoRARequestInit,
  UtilityCallError,
} from "@vllm-engine-core/protocol";
import {
  attachConnection,
  type ConnectionDiagnostics,
  type ConnectionHandle,
  openConnection,
  type RequestSink,
  type RuntimeConnection,
} from "@vllm-engine-core/runtime";
import { type EngineCoreClientConfig, resolveConfig } from "./config.js";
import { sameValue } from "./consensus.js";
import { EngineCoreOutputStream, type StreamController } from "./output-stream.js";
import { buildRequest, type CallRequest } from "./request.js";

export type PauseMode = "abort" | "wait" | "keep";

/** Structured-cloneable token for using one connection from another thread. */
export type ClientHandle = ConnectionHandle;

/**
 * How many clients of this thread share one runtime connection (a same-thread `attach` returns the same
 * connection object): `detach()` of one of them must not detach the others.
 */
const clientsPerConnection = new WeakMap<RuntimeConnection, number>();

export class EngineCoreClient implements AsyncDisposable {
  readonly #connection: RuntimeConnection;
  readonly #clientIndex: number;
  readonly #modelName: string;
  readonly #streams = new Map<string, EngineCoreOutputStream>();
  #closed = false;

  private constructor(connection: RuntimeConnection, clientIndex: number, modelName: string) {
    this.#connection = connection;
    clientsPerConnection.set(connection, (clientsPerConnection.get(connection) ?? 0) + 1);
    this.#clientIndex = clientIndex;
    this.#modelName = modelName;
  }

  /**
   * Starts (or reuses) the runtime thread, then runs the whole connection path on it: binds, handshake
   * with every engine, input registrations. Aborting `signal` at any stage closes everything opened so far.
   */
  static async connect(
    config: EngineCoreClientConfig,
    options: { signal?: AbortSignal } = {},
  ): Promise<EngineCoreClient> {
    const resolved = resolveConfig(config);
    options.signal?.throwIfAborted();
    const runtimeConfig = {
      transport: resolved.transport,
      clientIndex: resolved.clientIndex,
      modelName: resolved.modelName,
      ...(resolved.coordinator ? { coordinator: resolved.coordinator } : {}),
    };
    const connection = await openConnection(
      runtimeConfig as Parameters<typeof openConnection>[0],
      options.signal ? { signal: options.signal } : {},
    );
    return new EngineCoreClient(connection, resolved.clientIndex, resolved.modelName);
  }

  /** Uses a connection opened on another thread (pass `client.handle` there with postMessage). */
  static async attach(handle: ClientHandle): Promise<EngineCoreClient> {
    const connection = await attachConnection(handle);
    return new EngineCoreClient(connection, connection.info.clientIndex, connection.info.modelName ?? "");
  }

  /** Post this to another thread and call `EngineCoreClient.attach(handle)` there. */
  get handle(): ClientHandle {
    return this.#connection.handle;
  }

  // ---- info -------------------------------------------------------------------------------

  get inputAddress(): string {
    return this.#connection.info.inputAddress;
  }
  /** The first engine's output address; see `outputAddresses`. */
  get outputAddress(): string {
    return this.#connection.info.outputAddress;
  }
  /**
   * Each engine's output PULL endpoint, in engine order. In handshake-owner mode without `localOutputAddress`
   * every engine has its own, so an ENGINE_CORE_DEAD sentinel (which carries no engine index) fails only the
   * engine that sent it; otherwise all engines share one address.
   */
  get outputAddresses(): string[] {
    return this.#connection.info.engines.map((e) => e.outputAddress);
  }
  get engineCount(): number {
    return this.#connection.info.engines.length;
  }
  get engineIndices(): number[] {
    return this.#connection.info.engines.map((e) => e.index);
  }
  get readyResponses(): EngineCoreReadyResponse[] {
    return this.#connection.info.engines.map((e) => e.readyResponse);
  }
  get #first(): EngineCoreReadyResponse {
    return this.#connection.info.engines[0]!.readyResponse;
  }
  get modelDtype(): string {
    return this.#first.dtype;
  }
  get vllmVersion(): string {
    return this.#first.vllmVersion;
  }
  /** Sum over engines. */
  get totalNumGpuBlocks(): number {
    return this.readyResponses.reduce((sum, r) => sum + r.numGpuBlocks, 0);
  }
  /** Minimum over engines. */
  get maxModelLen(): number {
    return Math.min(...this.readyResponses.map((r) => r.maxModelLen));
  }
  get worldSize(): number {
    return this.#first.worldSize;
  }
  get dataParallelSize(): number {
    return this.#first.dataParallelSize;
  }
  get modelName(): string {
    return this.#modelName;
  }
  get clientIndex(): number {
    return this.#clientIndex;
  }
  get isHealthy(): boolean {
    return this.#connection.healthError === undefined;
  }
  get healthError(): Error | undefined {
    return this.#connection.healthError;
  }
  /** Called once, with the first health error. Returns an unsubscribe function. */
  onHealthChange(listener: (error: Error) => void): () => void {
    return this.#connection.onHealthChange(listener);
  }
  /**
   * Counters of engine output the runtime did not deliver: undecodable messages (with the latest
   * `ProtocolError`, and the streams, utility calls and engines they failed), outputs for ids that are not
   * live (normal after an abort), utility replies nobody waits for. Shared by every client of the
   * connection, counted since it opened.
   */
  async diagnostics(): Promise<ConnectionDiagnostics> {
    this.#checkOpen();
    return this.#connection.diagnostics();
  }

  // ---- requests ---------------------------------------------------------------------------

  #checkOpen(): void {
    if (this.#closed)
      throw new ClientClosedError({ detail: "EngineCoreClient.shutdown() was called on this client" });
  }

  #checkUsable(): void {
    this.#checkOpen();
    const health = this.#connection.healthError;
    if (health !== undefined) throw health;
  }

  /**
   * Sends one request and returns its output stream. The request is validated first
   * (`InvalidRequestError`, nothing is sent); `clientIndex` is stamped; a duplicate live request id is
   * rejected. Leaving the stream early (`break`, `return()`, `signal`) aborts the request on the engine.
   */
  async call(request: CallRequest, options: { signal?: AbortSignal } = {}): Promise<EngineCoreOutputStream> {
    this.#checkUsable();
    const { signal } = options;
    signal?.throwIfAborted();
    const wire = buildRequest(request, this.#clientIndex, { maxModelLen: this.maxModelLen });
    const requestId = wire.requestId;
    // Checked here too (the runtime checks across threads): registering the new stream below would
    // otherwise replace the live one in #streams, and abort() could then no longer end it.
    if (this.#streams.has(requestId)) throw new DuplicateRequestIdError({ requestId });
    let onAbort: (() => void) | undefined;
    const controller: StreamController = {
      abandon: (id) => {
        void this.#connection.abort([id]).catch(() => {
          // The connection is gone (shutdown or engine death): nothing left to abort.
        });
      },
    };
    const stream = new EngineCoreOutputStream(requestId, -1, controller, () => {
      if (this.#streams.get(requestId) === stream) this.#streams.delete(requestId);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    });
    const sink: RequestSink = {
      outputs: (batch: EngineCoreOutput[], meta) => {
        for (const output of batch) stream.push(output, meta.timestamp);
      },
      fail: (error: Error) => stream.fail(error),
    };
    this.#streams.set(requestId, stream);
    try {
      const { engineIndex } = await this.#connection.submit(wire, sink);
      stream.engineIndex = engineIndex;
    } catch (error) {
      if (this.#streams.get(requestId) === stream) this.#streams.delete(requestId);
      throw error;
    }
    if (signal !== undefined && !stream.settled) {
      onAbort = () => stream.abandonWith(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    return stream;
  }

  /**
   * Aborts requests that are still live (unknown and finished ids are ignored): their streams end
   * first with a synthetic `finishReason: ABORT` output, then ABORT goes to each owning engine.
   */
  async abort(requestIds: string | readonly string[]): Promise<void> {
    // Only a closed client refuses: after one engine died, the requests the other engines still serve
    // must stay abortable (the health error only stops new work).
    this.#checkOpen();
    const ids = typeof requestIds === "string" ? [requestIds] : [...requestIds];
    ids.forEach((id, i) => {
      if (typeof id !== "string") {
        throw new InvalidRequestError({
          field: `requestIds[${i}]`,
          detail: `request ids are strings, got ${typeof id}`,
        });
      }
    });
    if (ids.length === 0) return;
    // Local streams end first; the runtime finalises streams owned by other threads the same way.
    for (const id of ids) {
      const stream = this.#streams.get(id);
      if (stream !== undefined && !stream.settled) stream.finishAborted();
    }
    try {
      // notify: streams of other clients on this thread sharing the connection get their final ABORT too
      // (this client's own streams were finalised above and ignore it).
      await this.#connection.abort(ids, { notify: true });
    } catch (error) {
      // The connection closed underneath (runtime crash, shutdown from another thread): every stream
      // already failed, so there is nothing left to abort.
      if (this.#connection.healthError === undefined) throw error;
    }
  }

  // ---- utilities --------------------------------------------------------------------------

  /** Calls `method` on every engine; returns one result per engine, in engine order. */
  async callUtility<T = unknown>(method: string, args: readonly unknown[] = []): Promise<T[]> {
    this.#checkUsable();
    if (typeof method !== "string" || method.length === 0) {
      throw new InvalidRequestError({
        field: "method",
        detail: `callUtility needs the name of an EngineCore method, got ${JSON.stringify(method)}`,
      });
    }
    let replies: Awaited<ReturnType<RuntimeConnection["callUtility"]>>;
    try {
      replies = await this.#connection.callUtility(method, args);
    } catch (error) {
      // Arguments travel to the runtime thread by structured clone before they are msgpack-encoded there.
      if ((error as { name?: unknown }).name === "DataCloneError") {
        throw new InvalidRequestError({
          field: "args",
          detail: `an argument of ${method} cannot be sent to the runtime thread (${(error as Error).message}); pass plain data (numbers, strings, arrays, plain objects, Uint8Array)`,
        });
      }
      throw error;
    }
    return replies.map(({ engineIndex, output }) => {
      if (output.failureMessage != null) {
        throw new UtilityCallError({ method, engineIndex, failureMessage: output.failureMessage });
      }
      return (output.result?.value ?? null) as T;
    });
  }

  /** Like `callUtility`, but every engine must return the same value (`InconsistentUtilityResultsError`). */
  async callUtilityConsensus<T = unknown>(method: string, args: readonly unknown[] = []): Promise<T> {
    const results = await this.callUtility<T>(method, args);
    const first = results[0] as T;
    for (const r of results) {
      if (!sameValue(r, first)) {
        throw new InconsistentUtilityResultsError({
          method,
          results: results.map((value, i) => ({ engineIndex: this.engineIndices[i]!, value })),
        });
      }
    }
    return first;
  }

  isSleeping(): Promise<boolean> {
    return this.callUtilityConsensus<boolean>("is_sleeping");
  }
  async sleep(level = 1, mode: PauseMode = "abort"): Promise<void> {
    await this.callUtility("sleep", [level, mode]);
  }
  async wakeUp(tags: string[] | null = null): Promise<void> {
    await this.callUtility("wake_up", [tags]);
  }
  /** True only when every engine reset its cache. */
  async resetPrefixCache(resetRunningRequests = false, resetConnector = false): Promise<boolean> {
    return (
      await this.callUtility<boolean>("reset_prefix_cache", [resetRunningRequests, resetConnector])
    ).every(Boolean);
  }
  async resetMmCache(): Promise<void> {
    await this.callUtility("reset_mm_cache");
  }
  async resetEncoderCache(): Promise<void> {
    await this.callUtility("reset_encoder_cache");
  }
  /** Loads the adapter on every engine; true only when all of them did. */
  async addLora(lora: LoRARequestInit): Promise<boolean> {
    return (await this.callUtility<boolean>("add_lora", [lora])).every(Boolean);
  }
  async removeLora(loraId: number): Promise<boolean> {
    return (await this.callUtility<boolean>("remove_lora", [loraId])).every(Boolean);
  }
  async pauseScheduler(mode: PauseMode = "abort", clearCache = true): Promise<void> {
    await this.callUtility("pause_scheduler", [mode, clearCache]);
  }
  async resumeScheduler(): Promise<void> {
    await this.callUtility("resume_scheduler");
  }
  isSchedulerPaused(): Promise<boolean> {
    return this.callUtilityConsensus<boolean>("is_scheduler_paused");
  }
  async startProfile(profilePrefix: string | null = null): Promise<void> {
    await this.callUtility("profile", [true, profilePrefix]);
  }
  async stopProfile(profilePrefix: string | null = null): Promise<void> {
    await this.callUtility("profile", [false, profilePrefix]);
  }
  /** Runs `collective_rpc` on every engine and flattens the per-worker results. */
  async collectiveRpc(
    method: string,
    options: { timeout?: number | null; args?: unknown[]; kwargs?: Record<string, unknown> } = {},
  ): Promise<unknown[]> {
    const results = await this.callUtility("collective_rpc", [
      method,
      options.timeout ?? null,
      options.args ?? [],
      options.kwargs ?? {},
    ]);
    return results.flatMap((r) => (Array.isArray(r) ? r : [r]));
  }

  // ---- lifecycle --------------------------------------------------------------------------

  /**
   * Closes the connection for every thread that uses it: open streams and pending utility calls fail
   * with `ClientClosedError`; nothing is sent to the engines (they are stopped by whoever started them).
   * Idempotent.
   */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connection.shutdown();
  }

  /** Stops using the connection on this thread only (its live requests are aborted); others keep it. */
  async detach(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const others = (clientsPerConnection.get(this.#connection) ?? 1) - 1;
    clientsPerConnection.set(this.#connection, others);
    if (others === 0) {
      await this.#connection.detach();
      return;
    }
    // Other clients of this thread still use the connection: end and abort only this client's requests.
    const live = [...this.#streams.values()].filter((stream) => !stream.settled);
    const closed = new ClientClosedError({ detail: "EngineCoreClient.detach() was called on this client" });
    for (const stream of live) stream.fail(closed);
    if (live.length > 0) await this.#connection.abort(live.map((stream) => stream.requestId)).catch(() => {});
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
