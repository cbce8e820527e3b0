// One mock EngineCoreProc: its sockets (handshake DEALER, input DEALERs, output PUSHes), its scheduler,
// its step loop and its fault switches. Several engines can live in one process; each is independent,
// like separate vLLM engine processes.
import { setTimeout as delay } from "node:timers/promises";
import { Dealer, Push } from "zeromq";
import { CoordinatorLink } from "./coordinator-link.js";
import { logEvent } from "./events.js";
import { MockModelError } from "./logprobs.js";
import type { ResolvedOptions } from "./options.js";
import { MockPrefixCache } from "./prefix-cache.js";
import {
  type MockEngineConfig,
  type MockReadyResponse,
  makeEngineConfig,
  makeReadyResponse,
} from "./ready-response.js";
import { FINISH_ABORT, FINISH_ERROR, MockScheduler, type PauseState, type StepOutput } from "./scheduler.js";
import { makeSchedulerStats } from "./stats.js";
import { ExecutorState, invokeUtility, type UtilityHost, type UtilityOutcome } from "./utilities.js";
import { type DecodeRules, decodeRulesFor, type MockVllmVersion } from "./versions.js";
import {
  decodeInit,
  decodeInput,
  ENGINE_CORE_DEAD_FRAME,
  encodeOutputs,
  encodeRegistration,
  encodeStatus,
  engineIdentity,
  GARBAGE_FRAME,
  type InitAddresses,
  type MockAddRequest,
  type MockOutputs,
  type MockStructuredOutputs,
  UndecodableAddError,
  zeroCopyThreshold,
} from "./wire.js";

/** vLLM waits this long for INIT before giving up (HANDSHAKE_TIMEOUT_MINS = 5). */
const INIT_TIMEOUT_MS = 5 * 60_000;
/** The backends StructuredOutputManager.grammar_init knows. */
const STRUCTURED_OUTPUT_BACKENDS = new Set(["xgrammar", "guidance", "outlines", "lm-format-enforcer"]);
const HANDSHAKE_LINGER_MS = 5_000;
const OUTPUT_LINGER_MS = 4_000;

type OutputItem =
  | { kind: "outputs"; clientIndex: number; outputs: MockOutputs }
  | { kind: "dead" }
  | { kind: "garbage" };

export type EngineEndReason = "shutdown" | "dead" | "startup-failed";

export interface EngineHooks {
  /** The engine has stopped for good (its sockets are closed). */
  onEnded(engine: MockEngineCore, reason: EngineEndReason): void;
  /** Crash fault: the whole process must die abruptly. */
  crash(engineIndex: number): void;
}

/** What Python's threading.excepthook prints when vLLM's input thread dies (vllm/v1/engine/core.py). */
function inputThreadTraceback(engineIndex: number, exception: string): string {
  const prefix = `(EngineCore_DP${engineIndex} pid=${process.pid}) `;
  return [
    "Exception in thread Thread-1 (process_input_sockets):",
    "Traceback (most recent call last):",
    '  File "vllm/v1/engine/core.py", in process_input_sockets',
    "    req: EngineCoreRequest = add_request_decoder.decode(data_frames)",
    '  File "vllm/v1/serial_utils.py", in decode',
    "    return self.decoder.decode(bufs[0])",
    exception,
  ]
    .map((line) => `${prefix}${line}\n`)
    .join("");
}

function monotonicSeconds(): number {
  // process.hrtime uses CLOCK_MONOTONIC on Linux, the clock behind Python's time.monotonic().
  return Number(process.hrtime.bigint()) / 1e9;
}

export class MockEngineCore implements UtilityHost {
  readonly identity: Buffer;
  /** The engine's configuration (every field of the pin's registration). */
  readonly config: MockEngineConfig;
  /** What it registers with: the played version's keys only. */
  readonly readyResponse: MockReadyResponse;
  readonly vllmVersion: MockVllmVersion;
  readonly #decodeRules: DecodeRules;
  readonly executor = new ExecutorState();
  readonly #scheduler: MockScheduler;
  readonly #prefixCache: MockPrefixCache;
  readonly #options: ResolvedOptions;
  readonly #hooks: EngineHooks;

  #handshake: Dealer | undefined;
  #inputs: Dealer[] = [];
  #outputs: Push[] = [];
  /** The DP coordinator's engine side, when INIT (or the bootstrapped flags) named one. */
  #coordinator: CoordinatorLink | undefined;
  /** noCoordinatorSubscription: startup stops before the coordinator link (and the READY). */
  #coordinatorHang = false;
  #outputQueue: OutputItem[] = [];
  #draining: Promise<void> | undefined;
  #outputDead = false;
  #auxThreshold: number | undefined;
  #inputDead = false;

  #steps = 0;
  #stalled = false;
  #garbageSent = false;
  #ended = false;
  #stopping = false;
  #wake: (() => void) | undefined;
  #idleWaiters: (() => void)[] = [];
  /** Other frontends' load (--extra-waiting): reported as waiting while active; one last report once it clears. */
  #extraLoad: { active: boolean; reportDue: boolean } = { active: false, reportDue: false };
  #loop: Promise<void> | undefined;
  /** Cancels the step delay and a stall when the engine stops. */
  readonly #cancel = new AbortController();

  constructor(
    readonly engineIndex: number,
    options: ResolvedOptions,
    hooks: EngineHooks,
  ) {
    this.identity = engineIdentity(engineIndex);
    this.#options = options;
    this.#hooks = hooks;
    this.vllmVersion = options.vllmVersion;
    this.#decodeRules = decodeRulesFor(options.vllmVersion);
    this.config = makeEngineConfig(engineIndex, options.readyResponse, options.vllmVersion);
    this.readyResponse = makeReadyResponse(this.config, options.vllmVersion);
    this.#prefixCache = new MockPrefixCache(this.config.blockSize, this.config.numGpuBlocks);
    this.#scheduler = new MockScheduler({
      prefixCache: this.#prefixCache,
      maxModelLen: this.config.maxModelLen,
      maxNumSeqs: this.config.maxNumSeqs,
      tokensPerStep: options.tokensPerStep,
      echoPrompt: options.echoPrompt,
      logStats: options.logStats,
    });
  }

  get worldSize(): number {
    return this.config.worldSize;
  }

  get steps(): number {
    return this.#steps;
  }

  /** Runs the startup (handshake or bootstrap), then starts the input loops and the step loop. */
  async start(): Promise<void> {
    try {
      if (this.#options.mode === "handshake") {
        await this.#startWithHandshake();
      } else {
        this.#connectFrontend({
          inputs: [this.#options.inputAddress!],
          outputs: [this.#options.outputAddress!],
          coordinatorInput: this.#options.coordinatorInput ?? null,
          coordinatorOutput: this.#options.coordinatorOutput ?? null,
        });
        await this.#coordinator?.ready();
      }
    } catch (error) {
      if (this.#stopping) return;
      logEvent({
        event: "fault",
        kind: "startup-failed",
        engineIndex: this.engineIndex,
        detail: String(error),
      });
      await this.#closeSockets(0);
      this.#end("startup-failed");
      return;
    }
    if (this.#stopping) return;
    this.#loop = this.#runLoop();
  }

  async #startWithHandshake(): Promise<void> {
    const faults = this.#options.faults;
    const handshake = new Dealer({ linger: HANDSHAKE_LINGER_MS, receiveTimeout: INIT_TIMEOUT_MS });
    // zeromq.js types routingId as a string, but the native setter takes raw bytes (identities are binary).
    (handshake as unknown as { routingId: Buffer }).routingId = this.identity;
    this.#handshake = handshake;
    handshake.connect(this.#options.handshakeAddress!);

    const status = faults.badHello ? "HELO?" : "HELLO";
    await handshake.send(encodeStatus({ status, local: false, headless: true }));
    logEvent({ event: "hello", engineIndex: this.engineIndex, status });

    let frames: Buffer[];
    try {
      frames = await handshake.receive();
    } catch (error) {
      if ((error as { code?: string }).code === "EAGAIN") {
        throw new Error(
          `Did not receive response from front-end process within ${INIT_TIMEOUT_MS / 60_000} minutes`,
        );
      }
      throw error;
    }
    const addresses = decodeInit(frames[0] ?? new Uint8Array());
    logEvent({ event: "init", engineIndex: this.engineIndex, addresses });

    this.#connectFrontend(addresses);
    await this.#coordinator?.ready();
    if (this.#coordinatorHang) return; // the handshake socket stays open (and silent) until shutdown

    if (faults.noReady) {
      logEvent({ event: "fault", kind: "no-ready", engineIndex: this.engineIndex });
      return; // the handshake socket stays open (and silent) until shutdown
    }
    await handshake.send(encodeStatus({ status: "READY", local: false, headless: true }));
    logEvent({ event: "ready", engineIndex: this.engineIndex });
    handshake.close(); // linger 5 s delivers READY even if the frontend reads it late
    this.#handshake = undefined;
  }

  /** process_input_sockets + process_output_sockets startup: connect, register, start reading. */
  #connectFrontend(addresses: InitAddresses): void {
    const registration = encodeRegistration(this.readyResponse, this.vllmVersion);
    for (const address of addresses.inputs) {
      const input = new Dealer({ linger: 0, sendHighWaterMark: 0, receiveHighWaterMark: 0 });
      (input as unknown as { routingId: Buffer }).routingId = this.identity;
      input.connect(address);
      this.#inputs.push(input);
      if (this.#options.faults.noRegistration) {
        logEvent({ event: "fault", kind: "no-registration", engineIndex: this.engineIndex, address });
      } else {
        // Queued in the connect()ed pipe: resolves at once, delivered when the frontend is reachable.
        void input.send(registration).catch(() => {});
        logEvent({ event: "registered", engineIndex: this.engineIndex, address });
      }
    }
    for (const address of addresses.outputs) {
      const output = new Push({ linger: OUTPUT_LINGER_MS, sendHighWaterMark: 0 });
      output.connect(address);
      this.#outputs.push(output);
    }
    if (addresses.coordinatorInput && addresses.coordinatorOutput) {
      if (this.#options.faults.noCoordinatorSubscription) {
        logEvent({ event: "fault", kind: "no-coordinator-subscription", engineIndex: this.engineIndex });
        this.#coordinatorHang = true;
        for (const input of this.#inputs) void this.#readInput(input);
        return;
      }
      this.#coordinator = CoordinatorLink.connect(
        this.engineIndex,
        this.identity,
        { input: addresses.coordinatorInput, output: addresses.coordinatorOutput },
        {
          auxThreshold: zeroCopyThreshold(),
          vllmVersion: this.vllmVersion,
          blockSize: this.config.blockSize,
        },
      );
    }
    for (const input of this.#inputs) void this.#readInput(input);
  }

  async #readInput(socket: Dealer): Promise<void> {
    try {
      for await (const frames of socket) {
        if (this.#inputDead) break;
        this.#handleInput(frames);
      }
    } catch (error) {
      if (!socket.closed && !this.#stopping && !this.#inputDead) {
        this.#killInput(`receive failed: ${String(error)}`);
      }
    }
  }

  /** vLLM's input thread dies on an exception (undecodable message, failed validation): reading stops for good. */
  #killInput(detail: string): void {
    if (this.#inputDead) return;
    this.#inputDead = true;
    logEvent({ event: "fault", kind: "input-thread-died", engineIndex: this.engineIndex, detail });
    for (const input of this.#inputs) input.close();
  }

  #handleInput(frames: Buffer[]): void {
    let message: ReturnType<typeof decodeInput>;
    try {
      message = decodeInput(frames, this.#decodeRules);
    } catch (error) {
      if (error instanceof UndecodableAddError) {
        this.#rejectAdd(error);
        return;
      }
      this.#killInput(error instanceof Error ? error.message : String(error));
      return;
    }
    switch (message.type) {
      case "add":
        this.#handleAdd(message.request);
        break;
      case "abort": {
        const removed = this.#scheduler.abort(message.requestIds);
        logEvent({ event: "abort", engineIndex: this.engineIndex, requestIds: message.requestIds, removed });
        break;
      }
      case "utility":
        this.#handleUtility(message.clientIndex, message.callId, message.method, message.args);
        break;
      case "wakeup":
        break;
      case "executor_failed":
        this.#fatal("Executor failed.");
        break;
      case "other":
        // vLLM's busy loop logs "Unrecognized input request type" and carries on.
        logEvent({
          event: "fault",
          kind: "unrecognized-request-type",
          engineIndex: this.engineIndex,
          type: message.typeByte,
        });
        break;
    }
  }

  #rejected = 0;
  /**
   * StructuredOutputManager.backend (vllm/v1/structured_output/__init__.py): chosen by the first request
   * with structured outputs, from its `_backend`; one backend per engine, never changed afterwards.
   */
  #structuredOutputsBackend: string | null = null;

  /**
   * An ADD vLLM cannot decode: the exception escapes process_input_sockets, Python prints the thread's
   * traceback, and the engine never reads input again. --survive-bad-requests keeps reading (tests).
   */
  #rejectAdd(failure: UndecodableAddError): void {
    this.#rejected++;
    process.stderr.write(inputThreadTraceback(this.engineIndex, failure.error.message));
    if (!this.#options.surviveBadRequests) {
      this.#killInput(failure.error.message);
      return;
    }
    logEvent({
      event: "rejected",
      engineIndex: this.engineIndex,
      ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
      error: failure.error.message,
      errorType: failure.error.type,
      count: this.#rejected,
    });
  }

  /**
   * StructuredOutputManager.grammar_init, called from preprocess_add_request: the first request with
   * structured outputs picks the engine's backend from its `_backend`, which vLLM's frontend always sets
   * (SamplingParams._validate_structured_outputs); an unknown one (None included) raises, and the
   * request finishes with ERROR. The mock compiles no grammar. Returns the error message, or null.
   */
  #grammarInit(so: MockStructuredOutputs | null): string | null {
    if (so === null || this.#structuredOutputsBackend !== null) return null;
    if (!STRUCTURED_OUTPUT_BACKENDS.has(so.backend ?? "")) {
      return `Unsupported structured output backend: ${so.backend ?? "None"}`;
    }
    this.#structuredOutputsBackend = so.backend;
    return null;
  }

  #handleAdd(request: MockAddRequest): void {
    const { requestId, clientIndex } = request;
    logEvent({
      event: "add",
      engineIndex: this.engineIndex,
      requestId,
      clientIndex,
      currentWave: request.currentWave,
      promptTokens: request.promptTokenIds?.length ?? 0,
      maxTokens: request.sampling?.maxTokens,
      // Received and skipped, as msgspec does (e.g. session_id from a frontend newer than the pin).
      ...(request.skippedTrailing.length > 0 ? { skippedTrailing: request.skippedTrailing } : {}),
      ...(request.sampling?.structuredOutputs
        ? { structuredOutputs: request.sampling.structuredOutputs }
        : {}),
    });
    if (this.#stopping) {
      this.#sendFinish([requestId], clientIndex, FINISH_ABORT); // _reject_add_in_shutdown
      return;
    }
    // preprocess_add_request / Request.__init__: failures here become ERROR outputs for that request.
    if (request.sampling === null && request.pooling === null) {
      logEvent({
        event: "fault",
        kind: "preprocess-error",
        engineIndex: this.engineIndex,
        requestId,
        detail: "sampling_params and pooling_params can't both be unset",
      });
      this.#sendFinish([requestId], clientIndex, FINISH_ERROR);
      return;
    }
    if (request.pooling !== null) {
      // add_request raises in the busy loop for a pooling task the model does not support: fatal.
      this.#fatal(`Unsupported task: ${JSON.stringify(request.pooling.task ?? null)} Supported tasks: []`);
      return;
    }
    const sampling = request.sampling!;
    if (sampling.maxTokens === null) {
      logEvent({
        event: "fault",
        kind: "preprocess-error",
        engineIndex: this.engineIndex,
        requestId,
        detail: "max_tokens is None",
      });
      this.#sendFinish([requestId], clientIndex, FINISH_ERROR);
      return;
    }
    const grammarError = this.#grammarInit(sampling.structuredOutputs);
    if (grammarError !== null) {
      logEvent({
        event: "fault",
        kind: "preprocess-error",
        engineIndex: this.engineIndex,
        requestId,
        detail: grammarError,
      });
      this.#sendFinish([requestId], clientIndex, FINISH_ERROR);
      return;
    }
    if (sampling.scriptError !== null) {
      // The model-free executor raises ScriptError in execute_model: an exception in the step is fatal.
      this.#fatal(sampling.scriptError);
      return;
    }
    this.#scheduler.add({
      requestId,
      clientIndex,
      promptTokenIds: request.promptTokenIds ?? [],
      maxTokens: sampling.maxTokens,
      minTokens: sampling.minTokens,
      eosTokenId: sampling.eosTokenId,
      stopTokenIds: sampling.stopTokenIds,
      allStopTokenIds: sampling.allStopTokenIds,
      modelEosTokenId: this.#options.eosTokenId,
      repetitionDetection: sampling.repetitionDetection,
      traceHeaders: request.traceHeaders,
      cacheSalt: request.cacheSalt,
      loraName: request.loraName,
      skipReadingPrefixCache: sampling.skipReadingPrefixCache,
      numLogprobs: sampling.logprobs,
      // gpu_model_runner.py _get_prompt_logprobs_dict skips prompts given as embeddings (no token ids).
      numPromptLogprobs: request.promptTokenIds === null ? null : sampling.promptLogprobs,
      script: sampling.script,
    });
    if (request.abortImmediately) this.#scheduler.abort([requestId]);
    this.#wakeLoop();
  }

  #handleUtility(clientIndex: number, callId: bigint, method: string, args: unknown[]): void {
    logEvent({ event: "utility", engineIndex: this.engineIndex, method, callId, clientIndex, args });
    const reply = (outcome: UtilityOutcome) => {
      this.#enqueue(clientIndex, {
        utilityOutput: {
          callId,
          failureMessage: outcome.ok ? null : outcome.failureMessage,
          result: outcome.ok ? { value: outcome.value } : null,
        },
      });
    };
    if (this.#stopping) {
      reply({ ok: false, failureMessage: "Server shutting down" });
      return;
    }
    const run = () => {
      const outcome = invokeUtility(this, method, args);
      if (outcome instanceof Promise) void outcome.then(reply);
      else reply(outcome);
    };
    const delayMs = this.#utilityDelay(method);
    if (delayMs === 0) {
      run();
      return;
    }
    // Fault: a busy or hung engine answers late (or, past the engine's end, never).
    logEvent({
      event: "fault",
      kind: "utility-delay",
      engineIndex: this.engineIndex,
      method,
      callId,
      delayMs,
    });
    void this.#sleep(delayMs).then(() => {
      if (!this.#stopping && !this.#ended) run();
    });
  }

  #utilityDelay(method: string): number {
    const { utilityDelayMs, utilityDelayMethods, utilityDelayEngines } = this.#options.faults;
    if (utilityDelayMs === undefined) return 0;
    if (utilityDelayMethods !== undefined && !utilityDelayMethods.includes(method)) return 0;
    if (utilityDelayEngines !== undefined && !utilityDelayEngines.includes(this.engineIndex)) return 0;
    return utilityDelayMs;
  }

  // ---- UtilityHost -------------------------------------------------------------------------------------

  numRunning(): number {
    return this.#scheduler.numRunning;
  }

  resetPrefixCache(): void {
    this.#prefixCache.reset();
  }

  pauseScheduler(mode: "abort" | "wait" | "keep", clearCache: boolean): Promise<void> | undefined {
    if (mode === "abort") this.#abortAll();
    this.#scheduler.setPauseState(mode === "keep" ? "paused_all" : "paused_new");
    // _reset_caches once the pause is complete (at once, or when the engine is idle).
    const done = () => {
      if (clearCache) this.#prefixCache.reset();
    };
    if (!this.#scheduler.hasWork()) {
      done();
      return undefined;
    }
    return new Promise<void>((resolve) =>
      this.#idleWaiters.push(() => {
        done();
        resolve();
      }),
    );
  }

  resumeScheduler(): void {
    this.#scheduler.setPauseState("unpaused");
    this.#wakeLoop();
  }

  isSchedulerPaused(): boolean {
    return this.#scheduler.pauseState !== ("unpaused" satisfies PauseState);
  }

  // ---- stepping ----------------------------------------------------------------------------------------

  #wakeLoop(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #runLoop(): Promise<void> {
    const { stepMs } = this.#options;
    this.#startExtraLoad();
    while (!this.#stopping && !this.#ended) {
      // An engine serving other frontends' requests keeps stepping (EngineCore.step has requests).
      const busyElsewhere = this.#extraLoad.active || this.#extraLoad.reportDue;
      if (!this.#scheduler.hasWork() && !busyElsewhere) {
        for (const resolve of this.#idleWaiters.splice(0)) resolve();
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        continue;
      }
      // run_busy_loop: "Publish request counts before and after GPU step to ensure freshness."
      this.#publishRequestCounts();
      const scheduled = this.#scheduler.schedule();
      // The "forward pass": aborts arriving meanwhile remove requests before their tokens are emitted.
      if (stepMs > 0) await this.#sleep(stepMs);
      else if (busyElsewhere) await this.#sleep(1);
      else await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#stopping || this.#ended) return;
      let result: ReturnType<MockScheduler["complete"]>;
      try {
        result = this.#scheduler.complete(scheduled);
      } catch (error) {
        // An exception in EngineCore.step (the model runner) is fatal: run_engine_core sends ENGINE_CORE_DEAD.
        if (!(error instanceof MockModelError)) throw error;
        this.#fatal(error.message);
        return;
      }
      this.#publishRequestCounts();
      const statsOnly = result.scheduled === 0 && busyElsewhere && this.#options.logStats;
      if (result.scheduled === 0 && !statsOnly) {
        // Without log_stats the coordinator (just above) was the only one to tell about the cleared load.
        if (!this.#options.logStats) this.#extraLoad.reportDue = false;
        continue;
      }
      this.#steps++;
      this.#extraLoad.reportDue = false;
      const stats = this.#options.logStats ? this.#stepStats() : undefined;
      // update_from_output: "Return stats to only one of the front-ends" (the first with outputs), and
      // "We must return the stats even if there are no request outputs this step" (to client 0).
      let statsSent = false;
      for (const [clientIndex, outputs] of result.byClient) {
        this.#enqueue(clientIndex, statsSent || !stats ? { outputs } : { outputs, schedulerStats: stats });
        statsSent = true;
      }
      if (stats && !statsSent) this.#enqueue(0, { schedulerStats: stats });
      for (const f of result.finished) {
        logEvent({ event: "finished", engineIndex: this.engineIndex, ...f });
      }
      if (process.env.MOCK_ENGINE_LOG_STEPS === "1") {
        logEvent({
          event: "step",
          engineIndex: this.engineIndex,
          step: this.#steps,
          scheduled: result.scheduled,
          ...(stats ? { schedulerStats: true } : {}),
        });
      }
      await this.#afterStepFaults();
    }
  }

  /** --extra-waiting: the load is there from the start and clears after --extra-waiting-ms. */
  #startExtraLoad(): void {
    const { extraWaiting, extraWaitingMs, extraWaitingEngines, logStats } = this.#options;
    if (extraWaiting === 0 || (!logStats && this.#coordinator === undefined)) return;
    if (extraWaitingEngines !== undefined && !extraWaitingEngines.includes(this.engineIndex)) return;
    this.#extraLoad.active = true;
    if (extraWaitingMs === undefined) return;
    const timer = setTimeout(() => {
      // The step that finishes the other frontends' requests reports the lower counts once.
      this.#extraLoad = { active: false, reportDue: true };
      this.#wakeLoop();
    }, extraWaitingMs);
    timer.unref();
  }

  /** To the DP coordinator, when there is one and the counts changed (get_request_counts, get_kv_cache_usage). */
  #publishRequestCounts(): void {
    if (this.#coordinator === undefined) return;
    const extra = this.#extraLoad.active ? this.#options.extraWaiting : 0;
    const blocks = this.#scheduler.kvBlocksInUse(this.config.blockSize);
    this.#coordinator.publishCounts(
      {
        numRunning: this.#scheduler.numRunning,
        numWaiting: this.#scheduler.numWaiting + extra,
        kvCacheUsage: Math.min(1, blocks / Math.max(1, this.config.numGpuBlocks)),
      },
      this.vllmVersion,
    );
  }

  /** Scheduler.make_stats after a step, in the played version's layout. */
  #stepStats(): ReturnType<typeof makeSchedulerStats> {
    const admitted = this.#scheduler.admitted;
    const blocks = this.#scheduler.kvBlocksInUse(this.config.blockSize);
    const extra = this.#extraLoad.active ? this.#options.extraWaiting : 0;
    return makeSchedulerStats(
      {
        numRunning: this.#scheduler.numRunning,
        numWaiting: this.#scheduler.numWaiting + extra,
        kvCacheUsage: Math.min(1, blocks / Math.max(1, this.config.numGpuBlocks)),
        newRequests: admitted.requests,
        newRequestTokens: admitted.tokens,
        newRequestHits: admitted.hits,
      },
      this.vllmVersion,
    );
  }

  async #afterStepFaults(): Promise<void> {
    const f = this.#options.faults;
    const n = this.#steps;
    if (f.crashAfterSteps !== undefined && n >= f.crashAfterSteps) {
      logEvent({ event: "fault", kind: "crash", engineIndex: this.engineIndex, step: n });
      this.#hooks.crash(this.engineIndex);
      return;
    }
    if (f.deadSentinelAfterSteps !== undefined && n >= f.deadSentinelAfterSteps) {
      this.#fatal(`fault switch: deadSentinelAfterSteps=${f.deadSentinelAfterSteps}`);
      return;
    }
    if (f.garbageFrameAfterSteps !== undefined && n >= f.garbageFrameAfterSteps && !this.#garbageSent) {
      this.#garbageSent = true;
      logEvent({ event: "fault", kind: "garbage-frame", engineIndex: this.engineIndex, step: n });
      this.#outputQueue.push({ kind: "garbage" });
      this.#drain();
    }
    if (f.stallAfterSteps !== undefined && n >= f.stallAfterSteps && !this.#stalled) {
      this.#stalled = true;
      logEvent({ event: "fault", kind: "stall", engineIndex: this.engineIndex, step: n, stallMs: f.stallMs });
      await this.#sleep(f.stallMs ?? 0);
    }
  }

  /** A delay that ends early (without throwing) when the engine stops. */
  async #sleep(ms: number): Promise<void> {
    await delay(ms, undefined, { signal: this.#cancel.signal }).catch(() => {});
  }

  // ---- outputs -----------------------------------------------------------------------------------------

  #enqueue(clientIndex: number, outputs: Omit<MockOutputs, "engineIndex" | "timestamp">): void {
    this.#outputQueue.push({
      kind: "outputs",
      clientIndex,
      outputs: { ...outputs, engineIndex: this.engineIndex, timestamp: monotonicSeconds() },
    });
    this.#drain();
  }

  /** _send_finish_outputs_to_client: terminal outputs without tokens, listed in finished_requests too. */
  #sendFinish(requestIds: string[], clientIndex: number, finishReason: number): void {
    const outputs: StepOutput[] = requestIds.map((requestId) => ({
      requestId,
      newTokenIds: [],
      finishReason,
      stopReason: null,
    }));
    this.#enqueue(clientIndex, { outputs, finishedRequests: requestIds });
    for (const requestId of requestIds) {
      logEvent({
        event: "finished",
        engineIndex: this.engineIndex,
        requestId,
        clientIndex,
        finishReason,
        stopReason: null,
        tokens: 0,
      });
    }
  }

  /** finish_requests(None, ABORTED) + _send_abort_outputs: ABORT outputs grouped per client. */
  #abortAll(): void {
    const byClient = new Map<number, string[]>();
    for (const { requestId, clientIndex } of this.#scheduler.finishAll()) {
      const ids = byClient.get(clientIndex) ?? [];
      ids.push(requestId);
      byClient.set(clientIndex, ids);
    }
    for (const [clientIndex, ids] of byClient) this.#sendFinish(ids, clientIndex, FINISH_ABORT);
  }

  /** The output thread: one message at a time, in queue order, like vLLM's single output IO thread. */
  #drain(): Promise<void> {
    if (this.#draining) return this.#draining;
    if (this.#outputQueue.length === 0 || this.#outputDead) return Promise.resolve();
    const run = async () => {
      try {
        while (this.#outputQueue.length > 0 && !this.#outputDead) {
          await this.#sendItem(this.#outputQueue.shift()!);
        }
      } catch (error) {
        this.#outputDead = true;
        if (!this.#stopping) {
          logEvent({
            event: "fault",
            kind: "output-thread-died",
            engineIndex: this.engineIndex,
            detail: String(error),
          });
        }
      } finally {
        this.#draining = undefined;
      }
    };
    this.#draining = run();
    return this.#draining;
  }

  async #sendItem(item: OutputItem): Promise<void> {
    if (item.kind === "dead") {
      for (const socket of this.#outputs) await socket.send(ENGINE_CORE_DEAD_FRAME);
      this.#outputDead = true; // the output thread ends after the sentinel
      return;
    }
    if (item.kind === "garbage") {
      for (const socket of this.#outputs) await socket.send(GARBAGE_FRAME);
      return;
    }
    const socket = this.#outputs[item.clientIndex];
    if (!socket) {
      // vLLM indexes its output sockets with client_index; an out-of-range index kills the output thread.
      this.#outputDead = true;
      logEvent({
        event: "fault",
        kind: "output-thread-died",
        engineIndex: this.engineIndex,
        detail: `client_index ${item.clientIndex} out of range (${this.#outputs.length} output sockets)`,
      });
      return;
    }
    // Stamped at send for latency measurements; the wall stamp is sub-millisecond (Date.now() has 1 ms).
    if (this.#options.timestamps === "monotonic-at-send") {
      item.outputs.timestamp = monotonicSeconds();
    } else if (this.#options.timestamps === "wall") {
      item.outputs.timestamp = (performance.timeOrigin + performance.now()) / 1000;
    }
    let frames: Uint8Array[];
    try {
      // Read when the output thread builds its MsgpackEncoder: a bad value kills that thread in vLLM too.
      this.#auxThreshold ??= zeroCopyThreshold();
      frames = encodeOutputs(item.outputs, {
        auxThreshold: this.#auxThreshold,
        vllmVersion: this.vllmVersion,
        blockSize: this.config.blockSize,
      });
    } catch (error) {
      // An encoding failure ends vLLM's output thread too: nothing is sent any more.
      this.#outputDead = true;
      logEvent({
        event: "fault",
        kind: "output-thread-died",
        engineIndex: this.engineIndex,
        detail: String(error),
      });
      return;
    }
    await socket.send(frames);
  }

  // ---- death and shutdown ------------------------------------------------------------------------------

  /** A fatal engine error: ENGINE_CORE_DEAD on every output socket, then the engine is gone. */
  #fatal(reason: string): void {
    if (this.#ended || this.#stopping) return;
    this.#stopping = true;
    this.#cancel.abort();
    logEvent({ event: "fault", kind: "engine-dead", engineIndex: this.engineIndex, detail: reason });
    this.#wakeLoop();
    this.#outputQueue.push({ kind: "dead" });
    void (async () => {
      await Promise.race([this.#drain(), delay(5_000)]); // vLLM joins the output thread for up to 5 s
      await this.#closeSockets(OUTPUT_LINGER_MS);
      this.#end("dead");
    })();
  }

  /**
   * Graceful shutdown (SIGTERM with vLLM's default shutdown_timeout 0): in-flight requests get ABORT outputs,
   * then every socket is closed; pending output is flushed within the PUSH linger.
   */
  async shutdown(): Promise<void> {
    if (this.#ended) return;
    if (this.#stopping) {
      await this.#endedPromise;
      return;
    }
    this.#stopping = true;
    this.#cancel.abort();
    this.#abortAll();
    this.#wakeLoop();
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
    await this.#loop;
    await Promise.race([this.#drain(), delay(OUTPUT_LINGER_MS)]);
    await this.#closeSockets(OUTPUT_LINGER_MS);
    this.#end("shutdown");
  }

  #resolveEnded: (() => void) | undefined;
  readonly #endedPromise = new Promise<void>((resolve) => {
    this.#resolveEnded = resolve;
  });

  async #closeSockets(outputLinger: number): Promise<void> {
    this.#handshake?.close();
    this.#handshake = undefined;
    for (const input of this.#inputs) if (!input.closed) input.close();
    this.#coordinator?.close(outputLinger);
    for (const output of this.#outputs) {
      if (!output.closed) {
        output.linger = outputLinger;
        output.close();
      }
    }
  }

  #end(reason: EngineEndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopping = true;
    this.#wakeLoop();
    this.#resolveEnded?.();
    this.#hooks.onEnded(this, reason);
  }
}
