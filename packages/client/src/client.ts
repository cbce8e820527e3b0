// The public client. It runs on the caller's thread and never touches a socket: every engine
// interaction goes through the runtime host (@vllm-engine-core/runtime), whose dedicated worker
// thread owns the ZeroMQ sockets, the request registry and the engine selection.
import {
  type EngineCoreClientConfig,
  resolveConfig,
  resolveStructuredOutputsBackend,
  type StructuredOutputsBackend,
  type StructuredOutputsConfig,
} from "@vllm-engine-core/config";
import { ClientClosedError } from "@vllm-engine-core/errors";
import type {
  EngineCoreReadyResponse,
  LoRARequestInit,
  SchedulerStats,
  VllmVersion,
} from "@vllm-engine-core/protocol";
import {
  attachConnection,
  type ConnectionDiagnostics,
  type ConnectionHandle,
  openConnection,
  type RuntimeConnection,
} from "@vllm-engine-core/runtime";
import { sameValue } from "./consensus.js";
import {
  checkUtilityAvailable,
  type EngineVersions,
  engineVersions,
  requestVersions,
} from "./engine-versions.js";
import { InconsistentUtilityResultsError, InvalidRequestError, UtilityCallError } from "./errors.js";
import {
  ClientObservability,
  type SchedulerStatsListener,
  type SleepStateListener,
} from "./observability.js";
import { type EngineCoreOutputStream, openOutputStream } from "./output-stream.js";
import { buildRequest, type CallRequest } from "./request.js";
import type { OutputObserver } from "./request-timings.js";
import { arg, checkCallOptions, type PauseMode, type UtilityCallOptions } from "./utility-args.js";

export type { PauseMode, UtilityCallOptions };

/** Structured-cloneable token for using one connection from another thread. */
export type ClientHandle = ConnectionHandle;

export class EngineCoreClient implements AsyncDisposable {
  readonly #connection: RuntimeConnection;
  readonly #clientIndex: number;
  readonly #modelName: string;
  /** `--structured-outputs-config.backend`: what `_backend` requests name (see structured-outputs/backend.ts). */
  readonly structuredOutputsBackend: StructuredOutputsBackend;
  /** How this client stopped: the connection's own shutdown is what makes a second shutdown() wait. */
  #closed: "detached" | "shut down" | undefined;
  #versions: { engines: EngineVersions[]; request: VllmVersion[] } | undefined;
  readonly #observability: ClientObservability;
  /** What a stream whose reader left early calls (one function for every stream of this client). */
  readonly #abortOnEngine = (requestId: string): void => {
    void this.#connection.abort([requestId]).catch(() => {
      // The connection is gone (shutdown or engine death): nothing left to abort.
    });
  };

  private constructor(
    connection: RuntimeConnection,
    clientIndex: number,
    modelName: string,
    structuredOutputsBackend: StructuredOutputsBackend,
  ) {
    this.#connection = connection;
    // Several clients of one thread share the thread's connection object (a same-thread attach returns it):
    // the connection counts them, so that detach() of one leaves the others attached. First: it throws when
    // the connection closed meanwhile, before anything subscribed to it.
    connection.retain(this);
    this.#observability = new ClientObservability(connection);
    this.#clientIndex = clientIndex;
    this.#modelName = modelName;
    this.structuredOutputsBackend = structuredOutputsBackend;
  }

  /**
   * Starts (or reuses) the runtime thread, then runs the whole connection path on it: binds, handshake
   * with every engine, input registrations. Aborting `signal` at any stage closes everything opened so far.
   */
  static async connect(
    config: EngineCoreClientConfig,
    options: { signal?: AbortSignal } = {},
  ): Promise<EngineCoreClient> {
    // Validated and defaulted once, here on the calling thread; the runtime and the transport take the
    // resolved form as it is.
    const resolved = resolveConfig(config);
    options.signal?.throwIfAborted();
    const connection = await openConnection(resolved, options.signal ? { signal: options.signal } : {});
    return new EngineCoreClient(
      connection,
      resolved.clientIndex,
      resolved.modelName,
      resolved.structuredOutputs.backend,
    );
  }

  /**
   * Uses a connection opened on another thread (pass `client.handle` there with postMessage).
   * `structuredOutputs`: as in the config of `connect` (default backend `auto`).
   */
  static async attach(
    handle: ClientHandle,
    options: { structuredOutputs?: StructuredOutputsConfig } = {},
  ): Promise<EngineCoreClient> {
    const backend = resolveStructuredOutputsBackend(options.structuredOutputs);
    const connection = await attachConnection(handle);
    return new EngineCoreClient(
      connection,
      connection.info.clientIndex,
      connection.info.modelName ?? "",
      backend,
    );
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
  /**
   * Each engine's registration as it sent it. A field the engine's vLLM version does not send is absent
   * (undefined), never a default: see the README's per-version table.
   */
  get readyResponses(): EngineCoreReadyResponse[] {
    return this.#connection.info.engines.map((e) => e.readyResponse);
  }
  get #first(): EngineCoreReadyResponse {
    return this.#connection.info.engines[0]!.readyResponse;
  }
  get modelDtype(): string {
    return this.#first.dtype;
  }
  /** undefined when the engine does not report it (vLLM v0.22 engines). */
  get vllmVersion(): string | undefined {
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
  /** KV cache block size in tokens; undefined when the engine does not report it (vLLM v0.22). */
  get blockSize(): number | undefined {
    return this.#first.blockSize;
  }
  /** undefined when the engine does not report it (vLLM before v0.24). */
  get worldSize(): number | undefined {
    return this.#first.worldSize;
  }
  /** undefined when the engine does not report it (vLLM before v0.24). */
  get dataParallelSize(): number | undefined {
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
  /** The latest SchedulerStats `engineIndex` sent (engines send them only when they log stats), or undefined. */
  schedulerStats(engineIndex: number): SchedulerStats | undefined {
    return this.#observability.schedulerStats(engineIndex);
  }
  /** Called with every engine's SchedulerStats (alone or riding on an output batch). Returns an unsubscribe function. */
  onSchedulerStats(listener: SchedulerStatsListener): () => void {
    return this.#observability.onSchedulerStats(listener);
  }
  /**
   * For stat loggers (@vllm-engine-core/metrics): called with what each output of this client's streams
   * contributed to its engine's iteration (tokens, TTFT / inter-token latency, prefill stats, the finished
   * request's timings). Returns an unsubscribe function.
   */
  observeOutputs(observer: OutputObserver): () => void {
    return this.#observability.observeOutputs(observer);
  }

  /**
   * Calls `listener(1, level)` after each `sleep(level)` the engines answered and `listener(0, 0)` after each
   * `wakeUp()`, as vLLM's AsyncLLM records its sleep state; returns the unsubscribe function. Only this client's
   * calls are seen (another frontend's sleep is not).
   */
  onSleepStateChange(listener: SleepStateListener): () => void {
    return this.#observability.onSleepStateChange(listener);
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
    if (this.#closed !== undefined) {
      const call = this.#closed === "detached" ? "detach()" : "shutdown()";
      throw new ClientClosedError({ detail: `EngineCoreClient.${call} was called on this client` });
    }
  }

  /** The versions each engine may be, from its registration (fixed once connected). */
  get #engineVersions(): { engines: EngineVersions[]; request: VllmVersion[] } {
    if (this.#versions === undefined) {
      const engines = engineVersions(this.#connection.info.engines);
      this.#versions = { engines, request: requestVersions(engines) };
    }
    return this.#versions;
  }

  #checkUsable(): void {
    this.#checkOpen();
    const health = this.#connection.healthError;
    if (health !== undefined) throw health;
  }

  /**
   * Sends one request and returns its output stream. The request is validated first, with the rules of
   * the engines' vLLM versions (`InvalidRequestError`, nothing is sent); `clientIndex` is stamped; a
   * duplicate live request id is rejected. Leaving the stream early (`break`, `return()`, `signal`) aborts the request on the engine.
   */
  async call(request: CallRequest, options: { signal?: AbortSignal } = {}): Promise<EngineCoreOutputStream> {
    this.#checkUsable();
    const { signal } = options;
    signal?.throwIfAborted();
    const wire = buildRequest(request, this.#clientIndex, {
      maxModelLen: this.maxModelLen,
      vllmVersions: this.#engineVersions.request,
      structuredOutputsBackend: this.structuredOutputsBackend,
    });
    const { stream, outputs } = openOutputStream(wire.requestId, this.#abortOnEngine, {
      recorder: this.#observability.recorderFor(wire),
      observer: this.#observability.observer,
    });
    // `outputs` is the request's sink. The thread's one registry of it is the runtime connection's
    // (duplicate ids, abort, failure, detach): the client keeps none. `owner` lets detach() end only this
    // client's requests.
    const { engineIndex } = await this.#connection.submit(wire, outputs, { owner: this });
    outputs.engineIndex = engineIndex;
    if (signal !== undefined && !outputs.settled) {
      const onAbort = () => outputs.abandonWith(signal.reason);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        outputs.onSettled(() => signal.removeEventListener("abort", onAbort));
      }
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
    try {
      // This thread's streams (of this client or another sharing the connection) end at once with
      // their final ABORT output; the runtime ends those of other threads the same way.
      await this.#connection.abort(ids);
    } catch (error) {
      // The connection closed underneath (runtime crash, shutdown from another thread): every stream
      // already failed, so there is nothing left to abort.
      if (this.#connection.healthError === undefined) throw error;
    }
  }

  // ---- utilities --------------------------------------------------------------------------
  // Every utility method takes a last `{ signal, timeoutMs }` (see UtilityCallOptions): no bound by default,
  // as in vLLM. The typed helpers follow the signatures of vLLM's EngineCore / EngineCoreProc methods
  // (vllm/v1/engine/core.py at the pinned revision): argument order, defaults and literal values.

  /**
   * Calls `method` on every engine; returns one result per engine, in engine order. A method that an
   * engine's vLLM version does not have fails with `UtilityNotAvailableError` before anything is sent.
   */
  async callUtility<T = unknown>(
    method: string,
    args: readonly unknown[] = [],
    options: UtilityCallOptions = {},
  ): Promise<T[]> {
    this.#checkUsable();
    if (typeof method !== "string" || method.length === 0) {
      throw new InvalidRequestError({
        field: "method",
        detail: `callUtility needs the name of an EngineCore method, got ${JSON.stringify(method)}`,
      });
    }
    checkUtilityAvailable(method, this.#engineVersions.engines);
    const bounds = checkCallOptions(options);
    bounds.signal?.throwIfAborted();
    let replies: Awaited<ReturnType<RuntimeConnection["callUtility"]>>;
    try {
      replies = await this.#connection.callUtility(method, args, bounds);
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
  async callUtilityConsensus<T = unknown>(
    method: string,
    args: readonly unknown[] = [],
    options: UtilityCallOptions = {},
  ): Promise<T> {
    return this.#agree(method, await this.callUtility<T>(method, args, options));
  }

  #agree<T>(method: string, results: T[]): T {
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

  /** `is_sleeping()`: the same answer from every engine. */
  isSleeping(options: UtilityCallOptions = {}): Promise<boolean> {
    return this.callUtilityConsensus<boolean>("is_sleeping", [], options);
  }
  /** `sleep(level: int = 1, mode: PauseMode = "abort")`; level 0 pauses scheduling only. */
  async sleep(level = 1, mode: PauseMode = "abort", options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility(
      "sleep",
      [arg.int("sleep(level)", level), arg.pauseMode("sleep(mode)", mode)],
      options,
    );
    // vllm/v1/engine/async_llm.py AsyncLLM.sleep: record_sleep_state(1, level) once the engines slept.
    this.#observability.sleepStateChanged(1, level);
  }
  /**
   * `wake_up(tags: list[str] | None = None)`; `["scheduling"]` ends a level-0 sleep. A partial wake resumes
   * the scheduler before v0.24 and leaves it paused from v0.24 on (README, "Utilities per vLLM version").
   */
  async wakeUp(tags: string[] | null = null, options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility("wake_up", [arg.strListOrNull("wakeUp(tags)", tags)], options);
    // AsyncLLM.wake_up: record_sleep_state(0, 0), whatever the tags.
    this.#observability.sleepStateChanged(0, 0);
  }
  /** `reset_prefix_cache(reset_running_requests=False, reset_connector=False) -> bool`: true when every engine reset. */
  async resetPrefixCache(
    resetRunningRequests = false,
    resetConnector = false,
    options: UtilityCallOptions = {},
  ): Promise<boolean> {
    const args = [
      arg.bool("resetPrefixCache(resetRunningRequests)", resetRunningRequests),
      arg.bool("resetPrefixCache(resetConnector)", resetConnector),
    ];
    return (await this.callUtility<boolean>("reset_prefix_cache", args, options)).every(Boolean);
  }
  async resetMmCache(options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility("reset_mm_cache", [], options);
  }
  async resetEncoderCache(options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility("reset_encoder_cache", [], options);
  }
  /**
   * `add_lora(lora_request: LoRARequest) -> bool`: loads the adapter on every engine; true only when all did.
   * The request travels as LoRARequest's positional array (it is array_like).
   */
  async addLora(lora: LoRARequestInit, options: UtilityCallOptions = {}): Promise<boolean> {
    const value = arg.loraRequest("addLora(lora)", lora);
    return (await this.callUtility<boolean>("add_lora", [value], options)).every(Boolean);
  }
  /** `remove_lora(lora_id: int) -> bool`: true only when every engine removed it. */
  async removeLora(loraId: number, options: UtilityCallOptions = {}): Promise<boolean> {
    const id = arg.loraId("removeLora(loraId)", loraId);
    return (await this.callUtility<boolean>("remove_lora", [id], options)).every(Boolean);
  }
  /** `pin_lora(lora_id: int) -> bool`: keeps the adapter from being evicted; true only when every engine did. */
  async pinLora(loraId: number, options: UtilityCallOptions = {}): Promise<boolean> {
    const id = arg.loraId("pinLora(loraId)", loraId);
    return (await this.callUtility<boolean>("pin_lora", [id], options)).every(Boolean);
  }
  /** `list_loras() -> set[int]`, sorted; every engine must hold the same set. */
  async listLoras(options: UtilityCallOptions = {}): Promise<number[]> {
    const sets = await this.callUtility<number[]>("list_loras", [], options);
    return this.#agree(
      "list_loras",
      sets.map((ids) => [...(ids ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))),
    );
  }
  /** `EngineCoreProc.pause_scheduler(mode: PauseMode = "abort", clear_cache: bool = True)`. */
  async pauseScheduler(
    mode: PauseMode = "abort",
    clearCache = true,
    options: UtilityCallOptions = {},
  ): Promise<void> {
    const args = [
      arg.pauseMode("pauseScheduler(mode)", mode),
      arg.bool("pauseScheduler(clearCache)", clearCache),
    ];
    await this.callUtility("pause_scheduler", args, options);
  }
  async resumeScheduler(options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility("resume_scheduler", [], options);
  }
  isSchedulerPaused(options: UtilityCallOptions = {}): Promise<boolean> {
    return this.callUtilityConsensus<boolean>("is_scheduler_paused", [], options);
  }
  /** `profile(is_start=True, profile_prefix=None)`; the engine must run with a profiler config. */
  async startProfile(profilePrefix: string | null = null, options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility(
      "profile",
      [true, arg.strOrNull("startProfile(profilePrefix)", profilePrefix)],
      options,
    );
  }
  async stopProfile(profilePrefix: string | null = null, options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility(
      "profile",
      [false, arg.strOrNull("stopProfile(profilePrefix)", profilePrefix)],
      options,
    );
  }
  /**
   * `collective_rpc(method, timeout: float | None = None, args: tuple = (), kwargs: dict | None = None)` on
   * every engine; the per-worker results are flattened (engine order, then worker order). `rpc.timeout` is
   * vLLM's own, in seconds, applied by the engine's executor; `options.timeoutMs` bounds the whole call here.
   */
  async collectiveRpc(
    method: string,
    rpc: { timeout?: number | null; args?: unknown[]; kwargs?: Record<string, unknown> | null } = {},
    options: UtilityCallOptions = {},
  ): Promise<unknown[]> {
    if (typeof method !== "string" || method.length === 0) {
      throw new InvalidRequestError({
        field: "collectiveRpc(method)",
        detail: `expected the name of a worker method, got ${JSON.stringify(method)}`,
      });
    }
    const rpcArgs = rpc.args ?? [];
    if (!Array.isArray(rpcArgs)) {
      throw new InvalidRequestError({
        field: "collectiveRpc(args)",
        detail: "expected an array of arguments",
      });
    }
    const kwargs = rpc.kwargs ?? null;
    if (kwargs !== null && (typeof kwargs !== "object" || Array.isArray(kwargs))) {
      throw new InvalidRequestError({
        field: "collectiveRpc(kwargs)",
        detail: "expected a plain object or null",
      });
    }
    const timeout = arg.secondsOrNull("collectiveRpc(timeout)", rpc.timeout ?? null);
    const results = await this.callUtility("collective_rpc", [method, timeout, rpcArgs, kwargs], options);
    return results.flatMap((r) => (Array.isArray(r) ? r : [r]));
  }
  /** `get_supported_tasks() -> tuple[SupportedTask, ...]`: the same tasks on every engine. */
  getSupportedTasks(options: UtilityCallOptions = {}): Promise<string[]> {
    return this.callUtilityConsensus<string[]>("get_supported_tasks", [], options);
  }
  /** `save_sharded_state(path: str, pattern: str | None = None, max_size: int | None = None)` on every engine. */
  async saveShardedState(
    path: string,
    pattern: string | null = null,
    maxSize: number | null = null,
    options: UtilityCallOptions = {},
  ): Promise<void> {
    const args = [
      arg.str("saveShardedState(path)", path),
      arg.strOrNull("saveShardedState(pattern)", pattern),
      arg.intOrNull("saveShardedState(maxSize)", maxSize),
    ];
    await this.callUtility("save_sharded_state", args, options);
  }
  async executeDummyBatch(options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility("execute_dummy_batch", [], options);
  }
  /** `set_weight_version(weight_version: str)` on every engine. */
  async setWeightVersion(weightVersion: string, options: UtilityCallOptions = {}): Promise<void> {
    await this.callUtility(
      "set_weight_version",
      [arg.str("setWeightVersion(weightVersion)", weightVersion)],
      options,
    );
  }
  /** `get_weight_version() -> str`: the same version on every engine. */
  getWeightVersion(options: UtilityCallOptions = {}): Promise<string> {
    return this.callUtilityConsensus<string>("get_weight_version", [], options);
  }

  // ---- lifecycle --------------------------------------------------------------------------

  /**
   * Closes the connection for every thread that uses it: open streams and pending utility calls fail
   * with `ClientClosedError`; nothing is sent to the engines (they are stopped by whoever started them).
   * Idempotent.
   */
  async shutdown(): Promise<void> {
    if (this.#closed === "detached") return;
    this.#closed = "shut down";
    this.#observability.close();
    // Idempotent there: a second call waits for the first ("resolved" means the sockets are closed).
    return this.#connection.shutdown();
  }

  /** Stops using the connection on this thread only (its live requests are aborted); others keep it. */
  async detach(): Promise<void> {
    if (this.#closed !== undefined) return;
    this.#closed = "detached";
    this.#observability.close();
    // Ends and aborts this client's requests; the thread detaches when no other client of it is left.
    const closed = new ClientClosedError({ detail: "EngineCoreClient.detach() was called on this client" });
    await this.#connection.release(this, closed);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
