// A pure, socket-free model of vLLM's scheduler for one engine: waiting/running queues, pause states,
// per-step token generation and the stop rules of vllm/v1/core/sched/utils.py `check_stop`
// (min_tokens, then EOS, then stop_token_ids, then max_model_len / max_tokens), plus the logprobs the
// model runner attaches to each output (see logprobs.ts).
import {
  type MockPromptLogprobs,
  type MockSampleLogprobs,
  promptLogprobs,
  resolveNumLogprobs,
  sampleLogprobs,
} from "./logprobs.js";
import type { MockPrefixCache } from "./prefix-cache.js";
import {
  EchoTokenStream,
  MinTokensMask,
  modelFreeToken,
  promptSeed,
  ScriptedTokenStream,
  TokenStream,
} from "./tokens.js";
import type { MockRepetitionDetection, MockScript } from "./wire.js";

export const FINISH_STOP = 0;
export const FINISH_LENGTH = 1;
export const FINISH_ABORT = 2;
export const FINISH_ERROR = 3;
/** FinishReason.REPETITION (check_stop's repetition_detection), with stop_reason "repetition_detected". */
export const FINISH_REPETITION = 4;

export type PauseState = "unpaused" | "paused_new" | "paused_all";

export interface SchedRequestSpec {
  requestId: string;
  clientIndex: number;
  promptTokenIds: readonly number[];
  maxTokens: number;
  minTokens: number;
  eosTokenId: number | null;
  stopTokenIds: readonly number[];
  /** `_all_stop_token_ids` (stop_token_ids included): masked before min_tokens. */
  allStopTokenIds?: readonly number[];
  /** The model's EOS (`--eos-token-id`): a script ending "eos" falls back to it; masked before min_tokens. */
  modelEosTokenId?: number | null;
  repetitionDetection?: MockRepetitionDetection | null;
  /** EngineCoreRequest.trace_headers, echoed on every output of the request. */
  traceHeaders?: Record<string, string> | null;
  /** Prefix-cache keys: cache_salt (first block) and the LoRA adapter's name (every block). */
  cacheSalt?: string | null;
  loraName?: string | null;
  /** SamplingParams.skip_reading_prefix_cache (set when prompt logprobs are asked): no lookup, not counted. */
  skipReadingPrefixCache?: boolean;
  /** SamplingParams.logprobs (-1 = whole vocabulary); null/absent = no sample logprobs. */
  numLogprobs?: number | null;
  /** SamplingParams.prompt_logprobs (-1 = whole vocabulary); null/absent = no prompt logprobs. */
  numPromptLogprobs?: number | null;
  /** extra_args' scripted tokens: generated first, whatever the mode. */
  script?: MockScript | null;
}

interface SchedRequest extends SchedRequestSpec {
  stream: { next(): number };
  numOutputTokens: number;
  /** The generated ids so far (repetition detection reads their tail). */
  outputTokenIds: number[];
  /** Request.block_hashes: one per full block of prompt + output, and how many are stored in the cache. */
  blockKeys: string[];
  storedBlocks: number;
  /** Prompt tokens the prefix cache supplied at admission. */
  cachedTokens: number;
  /** Request.events: recorded only with log_stats, taken by the request's next output (take_events). */
  events: MockEngineCoreEvent[];
}

/** vllm/v1/engine/__init__.py EngineCoreEvent: QUEUED = 1, SCHEDULED = 2, PREEMPTED = 3; monotonic seconds. */
export interface MockEngineCoreEvent {
  type: 1 | 2 | 3;
  timestamp: number;
}
export const EVENT_QUEUED = 1;
export const EVENT_SCHEDULED = 2;

/** time.monotonic(): process.hrtime is CLOCK_MONOTONIC on Linux. */
function monotonic(): number {
  return Number(process.hrtime.bigint()) / 1e9;
}

export interface StepOutput {
  requestId: string;
  newTokenIds: number[];
  finishReason: number | null;
  stopReason: number | string | null;
  newLogprobs?: MockSampleLogprobs | null;
  newPromptLogprobsTensors?: MockPromptLogprobs | null;
  /** On a request's first output: its prompt length, for the PrefillStats vLLM attaches there. */
  prefillPromptTokens?: number;
  /** With prefillPromptTokens: the prompt tokens that were prefix-cache hits. */
  prefillCachedTokens?: number;
  /** request.take_events() (log_stats only): the events recorded since the request's last output. */
  events?: MockEngineCoreEvent[] | null;
  /** trace_headers=request.trace_headers (update_from_output), on every output of the request. */
  traceHeaders?: Record<string, string> | null;
}

export interface StepResult {
  /** Per client index, the outputs of this step in scheduling order. */
  byClient: Map<number, StepOutput[]>;
  /** Requests that finished in this step. */
  finished: {
    requestId: string;
    clientIndex: number;
    finishReason: number;
    stopReason: number | string | null;
    tokens: number;
  }[];
  /** Number of requests that received tokens. */
  scheduled: number;
}

export class MockScheduler {
  readonly #waiting = new Map<string, SchedRequest>();
  readonly #running = new Map<string, SchedRequest>();
  #pause: PauseState = "unpaused";
  /** max_num_logprobs of the batch being stepped (null: no request in it asked for logprobs). */
  #batchNumLogprobs: number | null = null;
  /** Requests admitted by the last schedule() that looked up the prefix cache: their tokens and hits. */
  #admitted = { requests: 0, tokens: 0, hits: 0 };

  constructor(
    private readonly limits: {
      maxModelLen: number;
      maxNumSeqs: number;
      tokensPerStep: number;
      echoPrompt?: boolean;
      /** log_stats: record QUEUED / SCHEDULED events on requests (Scheduler.add_request / schedule). */
      logStats?: boolean;
      /** Automatic prefix caching (vLLM's default); without it nothing is cached and every request counts. */
      prefixCache?: MockPrefixCache;
    },
  ) {}

  get pauseState(): PauseState {
    return this.#pause;
  }

  setPauseState(state: PauseState): void {
    this.#pause = state;
  }

  get numRunning(): number {
    return this.#running.size;
  }

  get numWaiting(): number {
    return this.#waiting.size;
  }

  /** Requests admitted by the last schedule() (PrefixCacheStats.record): count, prompt tokens, hits. */
  get admitted(): { requests: number; tokens: number; hits: number } {
    return { ...this.#admitted };
  }

  /** KV cache blocks the running requests hold (prompt + generated tokens, whole blocks). */
  kvBlocksInUse(blockSize: number): number {
    let blocks = 0;
    for (const r of this.#running.values()) {
      blocks += Math.ceil((r.promptTokenIds.length + r.numOutputTokens) / blockSize);
    }
    return blocks;
  }

  /** vLLM's get_num_unfinished_requests: what the engine considers work, given the pause state. */
  get numUnfinished(): number {
    if (this.#pause === "paused_all") return 0;
    if (this.#pause === "paused_new") return this.#running.size;
    return this.#waiting.size + this.#running.size;
  }

  hasWork(): boolean {
    return this.numUnfinished > 0;
  }

  add(spec: SchedRequestSpec): void {
    // Like vLLM's request dict, a re-used id replaces the earlier entry.
    this.#waiting.delete(spec.requestId);
    this.#running.delete(spec.requestId);
    this.#waiting.set(spec.requestId, {
      ...spec,
      stream: this.#tokenStream(spec),
      numOutputTokens: 0,
      outputTokenIds: [],
      blockKeys: [],
      storedBlocks: 0,
      cachedTokens: 0,
      // Scheduler.add_request: `if self.log_stats: request.record_event(EngineCoreEventType.QUEUED)`.
      events: this.limits.logStats ? [{ type: EVENT_QUEUED, timestamp: monotonic() }] : [],
    });
  }

  /**
   * The request's "model": its script (then the model-free executor's ids, or EOS), else echoed or FNV
   * ids; stop ids masked before min_tokens, as the executor's TokenChooser does.
   */
  #tokenStream(spec: SchedRequestSpec): { next(): number } {
    const seed = promptSeed(spec.promptTokenIds);
    const eos = spec.eosTokenId ?? spec.modelEosTokenId ?? null;
    let stream: { next(): number };
    if (this.limits.echoPrompt) {
      const echo = new EchoTokenStream(spec.promptTokenIds);
      stream = spec.script ? new ScriptedTokenStream(spec.script, eos, () => echo.next()) : echo;
    } else if (spec.script) {
      stream = new ScriptedTokenStream(spec.script, eos, (index) => modelFreeToken(seed, index));
    } else {
      stream = new TokenStream(spec.requestId, spec.promptTokenIds);
    }
    const masked = new Set([...(spec.allStopTokenIds ?? []), ...spec.stopTokenIds]);
    if (eos !== null) masked.add(eos);
    return MinTokensMask.around(stream, spec.minTokens, masked, seed);
  }

  /** Client abort: removes the ids (unknown ids are ignored), returns the ids that were live. */
  abort(requestIds: readonly string[]): string[] {
    const removed: string[] = [];
    for (const id of requestIds) {
      if (this.#waiting.delete(id) || this.#running.delete(id)) removed.push(id);
    }
    return removed;
  }

  /** finish_requests(None, ABORTED): drops every request, returns them in admission order. */
  finishAll(): { requestId: string; clientIndex: number }[] {
    const all = [...this.#running.values(), ...this.#waiting.values()].map((r) => ({
      requestId: r.requestId,
      clientIndex: r.clientIndex,
    }));
    this.#running.clear();
    this.#waiting.clear();
    return all;
  }

  /** Start of a step: admits waiting requests (unless paused) and returns the ids scheduled for this step. */
  schedule(): string[] {
    this.#admitted = { requests: 0, tokens: 0, hits: 0 };
    if (this.#pause === "paused_all") return [];
    // Scheduler.schedule: one `scheduled_timestamp = time.monotonic()` for every request admitted this step.
    const scheduledTimestamp = monotonic();
    if (this.#pause === "unpaused") {
      for (const [id, request] of this.#waiting) {
        if (this.#running.size >= this.limits.maxNumSeqs) break;
        this.#waiting.delete(id);
        this.#running.set(id, request);
        if (this.limits.logStats)
          request.events.push({ type: EVENT_SCHEDULED, timestamp: scheduledTimestamp });
        this.#admit(request);
      }
    }
    // allocate_slots caches every full block of the tokens being computed (prompt, then generated ones).
    const cache = this.limits.prefixCache;
    if (cache) {
      for (const request of this.#running.values()) {
        cache.extendKeys(request.blockKeys, [...request.promptTokenIds, ...request.outputTokenIds], {
          salt: request.cacheSalt ?? null,
          lora: request.loraName ?? null,
        });
        if (request.blockKeys.length > request.storedBlocks) {
          cache.store(request.blockKeys.slice(request.storedBlocks));
          request.storedBlocks = request.blockKeys.length;
        }
      }
    }
    // The sampler gathers max_num_logprobs columns for the whole batch (InputBatch.max_num_logprobs,
    // fixed for the forward pass): every request that asked for logprobs gets that width.
    this.#batchNumLogprobs = null;
    for (const request of this.#running.values()) {
      if (request.numLogprobs == null) continue;
      const n = resolveNumLogprobs(request.numLogprobs);
      this.#batchNumLogprobs = Math.max(this.#batchNumLogprobs ?? n, n);
    }
    return [...this.#running.keys()];
  }

  /** get_computed_blocks + record_prefix_cache_stats for a request being admitted. */
  #admit(request: SchedRequest): void {
    const cache = this.limits.prefixCache;
    const numTokens = request.promptTokenIds.length;
    if (!cache) {
      this.#admitted.requests++;
      this.#admitted.tokens += numTokens;
      return;
    }
    if (request.skipReadingPrefixCache) return;
    cache.extendKeys(request.blockKeys, request.promptTokenIds, {
      salt: request.cacheSalt ?? null,
      lora: request.loraName ?? null,
    });
    request.cachedTokens = cache.hitTokens(request.blockKeys, numTokens);
    this.#admitted.requests++;
    this.#admitted.tokens += numTokens;
    this.#admitted.hits += request.cachedTokens;
  }

  /**
   * End of a step: generates tokens for the scheduled ids that are still running (aborts in between win).
   * Throws MockModelError where vLLM's model runner would raise (fatal for the engine).
   */
  complete(scheduled: readonly string[]): StepResult {
    const result: StepResult = { byClient: new Map(), finished: [], scheduled: 0 };
    for (const id of scheduled) {
      const request = this.#running.get(id);
      if (!request) continue;
      result.scheduled++;
      const output = this.#generate(request);
      let list = result.byClient.get(request.clientIndex);
      if (!list) {
        list = [];
        result.byClient.set(request.clientIndex, list);
      }
      list.push(output);
      if (output.finishReason !== null) {
        this.#running.delete(id);
        result.finished.push({
          requestId: id,
          clientIndex: request.clientIndex,
          finishReason: output.finishReason,
          stopReason: output.stopReason,
          tokens: request.numOutputTokens,
        });
      }
    }
    return result;
  }

  #generate(request: SchedRequest): StepOutput {
    const firstPosition = request.numOutputTokens;
    const newTokenIds: number[] = [];
    let stop: { finishReason: number; stopReason: number | string | null } | null = null;
    for (let i = 0; i < this.limits.tokensPerStep && stop === null; i++) {
      const token = request.stream.next();
      newTokenIds.push(token);
      request.outputTokenIds.push(token);
      request.numOutputTokens++;
      stop = this.#checkStop(request, token);
    }
    const output: StepOutput = {
      requestId: request.requestId,
      newTokenIds,
      finishReason: stop?.finishReason ?? null,
      stopReason: stop?.stopReason ?? null,
    };
    if (firstPosition === 0) {
      output.prefillPromptTokens = request.promptTokenIds.length;
      output.prefillCachedTokens = request.cachedTokens;
    }
    if (request.traceHeaders) output.traceHeaders = request.traceHeaders;
    // update_from_output: EngineCoreOutput(events=request.take_events()), None when there are none.
    if (request.events.length > 0) {
      output.events = request.events;
      request.events = [];
    }
    // Scheduler.update_from_output: logprobs.slice_request(req_index, len(new_token_ids)) for a request
    // whose num_logprobs is set, one row per token it keeps after the stop check.
    if (request.numLogprobs != null && this.#batchNumLogprobs !== null) {
      output.newLogprobs = sampleLogprobs(
        request.requestId,
        firstPosition,
        newTokenIds,
        this.#batchNumLogprobs,
      );
    }
    // The whole prompt's logprobs travel with the output of the step that completes prefill (the first
    // one here: the mock prefills in one step; vLLM accumulates chunked-prefill pieces until then).
    if (firstPosition === 0 && request.numPromptLogprobs != null) {
      output.newPromptLogprobsTensors = promptLogprobs(
        request.requestId,
        request.promptTokenIds,
        resolveNumLogprobs(request.numPromptLogprobs),
      );
    }
    return output;
  }

  #checkStop(
    request: SchedRequest,
    token: number,
  ): { finishReason: number; stopReason: number | string | null } | null {
    if (request.numOutputTokens < request.minTokens) return null;
    if (request.eosTokenId !== null && token === request.eosTokenId) {
      return { finishReason: FINISH_STOP, stopReason: null };
    }
    if (request.stopTokenIds.includes(token)) return { finishReason: FINISH_STOP, stopReason: token };
    const numTokens = request.promptTokenIds.length + request.numOutputTokens;
    if (numTokens >= this.limits.maxModelLen || request.numOutputTokens >= request.maxTokens) {
      return { finishReason: FINISH_LENGTH, stopReason: null };
    }
    if (request.repetitionDetection && hasRepetition(request.outputTokenIds, request.repetitionDetection)) {
      return { finishReason: FINISH_REPETITION, stopReason: "repetition_detected" };
    }
    return null;
  }
}

/**
 * check_sequence_repetition (vllm/v1/core/sched/utils.py): for each pattern length from min to max
 * (min <= 0 counts as 1), is the tail `min_count` repetitions of the last `pattern_len` ids? Off when
 * max <= 0, min_count < 2 or min > max; stops at the first length whose repetitions exceed the output.
 */
export function hasRepetition(tokens: readonly number[], params: MockRepetitionDetection): boolean {
  const max = params.maxPatternSize;
  const min = params.minPatternSize <= 0 ? 1 : params.minPatternSize;
  const count = params.minCount;
  if (max <= 0 || count < 2 || min > max) return false;
  for (let len = min; len <= max; len++) {
    if (len * count > tokens.length) return false;
    let repeating = true;
    for (let n = 1; n <= len && repeating; n++) {
      const target = tokens[tokens.length - n];
      for (let m = 1; m < count; m++) {
        if (tokens[tokens.length - (len * m + n)] !== target) {
          repeating = false;
          break;
        }
      }
    }
    if (repeating) return true;
  }
  return false;
}
