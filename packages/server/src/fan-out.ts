// Sampling many (`n`) and prompting many (a list of prompts): one engine request per choice, read as one
// stream of (choice, delta). The engine core knows only single requests; vLLM's frontend fans a request
// with `n > 1` out into children (vllm/v1/engine/parallel_sampling.py `ParentRequest.get_child_info`: child
// id `{index}_{parent id}`, `n = 1`, and when a seed is given `seed + index`), and the completion route
// gives every prompt its own request `{request id}-{i}` (vllm/entrypoints/openai/completion/serving.py),
// merging their outputs as they come (`merge_async_iterators`). Choice `index` is `prompt * n + sample`.
// Each child is its own text stream (detokenizer, stop strings): a stop string ends only that child.
import {
  type CallRequest,
  InvalidRequestError,
  type SamplingParamsInit,
  validateRequest,
} from "@vllm-engine-core/client";
import type { TextDelta, TextStream } from "@vllm-engine-core/text";
import { type ServerContext, startGeneration } from "./context.js";
import { badRequest } from "./errors.js";

/** One prompt of a request, as the engine gets it (before the fan-out into `n` children). */
/**
 * One prompt's engine request. Its fields other than the id and the sampling parameters (external id, LoRA,
 * priority, session id) are carried to every child as they are, as vLLM's `ParentRequest` does.
 */
export type PromptRequest = CallRequest & { promptTokenIds: number[]; samplingParams: SamplingParamsInit };

/** One choice of the response: its engine request and its text stream. */
export interface Choice {
  /** The OpenAI choice index: `promptIndex * n + sample`. */
  index: number;
  promptIndex: number;
  /** The engine request id (`{sample}_{parent}` when n > 1, else the prompt's own id). */
  requestId: string;
  stream: TextStream;
}

export interface ChoiceDelta {
  choice: Choice;
  delta: TextDelta;
}

/** vLLM's child request id. */
export function childRequestId(parentId: string, sample: number): string {
  return `${sample}_${parentId}`;
}

/** The child's sampling parameters: each child gets its own seed when the parent has one. */
export function childSamplingParams(parent: SamplingParamsInit, sample: number): SamplingParamsInit {
  const seed = parent.seed;
  if (seed === undefined || seed === null) return parent;
  return { ...parent, seed: typeof seed === "bigint" ? seed + BigInt(sample) : seed + sample };
}

/** vLLM's `VLLM_MAX_N_SEQUENCES` default (vllm/envs.py). */
const MAX_N = 16_384;

/**
 * The parent's `n` checked as vLLM's `SamplingParams._verify_args` / `_verify_greedy_sampling` check it
 * (the children, with `n = 1`, are checked again by `client.call`): the client's validation of the
 * request with `n` set, so the greedy rule uses the same effective temperature.
 */
export function checkParentSampling(prompt: PromptRequest, n: number): void {
  if (n < 1) throw badRequest(`n must be at least 1, got ${n}.`, "n");
  if (n > MAX_N) {
    throw badRequest(
      `n must be at most ${MAX_N}, got ${n}. To increase this limit, set the VLLM_MAX_N_SEQUENCES ` +
        "environment variable of the vLLM frontend this server replaces.",
      "n",
    );
  }
  if (n === 1) return;
  try {
    validateRequest({ ...prompt, samplingParams: { ...prompt.samplingParams, n } });
  } catch (error) {
    // Only the rules about `n` are the parent's; the rest is reported by the children's own check.
    if (error instanceof InvalidRequestError && error.field.endsWith(".n")) throw error;
  }
}

/**
 * Sends every choice's request (prompt by prompt, sample by sample, as vLLM adds them). If one fails,
 * those already sent are aborted and the error is thrown. `signal` aborts them all.
 */
export async function startChoices(
  ctx: ServerContext,
  prompts: readonly PromptRequest[],
  n: number,
  signal: AbortSignal,
  /** Tokens per delta (`streamIntervalOf`). */
  streamInterval = 1,
): Promise<Choice[]> {
  const choices: Choice[] = [];
  try {
    for (const [promptIndex, prompt] of prompts.entries()) {
      for (let sample = 0; sample < n; sample++) {
        const requestId = n === 1 ? prompt.requestId : childRequestId(prompt.requestId, sample);
        const samplingParams =
          n === 1 ? prompt.samplingParams : childSamplingParams(prompt.samplingParams, sample);
        const stream = await startGeneration(
          ctx,
          { ...prompt, requestId, samplingParams },
          signal,
          streamInterval,
        );
        choices.push({ index: promptIndex * n + sample, promptIndex, requestId, stream });
      }
    }
  } catch (error) {
    await Promise.all(choices.map((c) => c.stream.return().catch(() => {})));
    throw error;
  }
  return choices;
}

type Settled = { choice: Choice; result: IteratorResult<TextDelta> } | { choice: Choice; error: unknown };

/**
 * Every choice's deltas in the order they arrive. One read is outstanding per choice, and a choice is read
 * again only once the consumer asked for the next delta, so a slow HTTP reader slows the reads (the
 * client's output streams queue and merge meanwhile). Leaving early (`break`, `return()`) or an error of
 * one choice ends every other choice still running, which aborts it on the engine.
 */
export function mergeChoices(choices: readonly Choice[]): AsyncIterableIterator<ChoiceDelta> {
  if (choices.length === 1) return singleChoice(choices[0]!);
  return mergeMany(choices);
}

/** The common case, without a generator or an async function in between (one promise per delta). */
function singleChoice(choice: Choice): AsyncIterableIterator<ChoiceDelta> {
  const wrap = (r: IteratorResult<TextDelta>): IteratorResult<ChoiceDelta> =>
    r.done ? { value: undefined, done: true } : { value: { choice, delta: r.value }, done: false };
  return {
    next(): Promise<IteratorResult<ChoiceDelta>> {
      return choice.stream.next().then(wrap);
    },
    async return(): Promise<IteratorResult<ChoiceDelta>> {
      await choice.stream.return();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

async function* mergeMany(choices: readonly Choice[]): AsyncGenerator<ChoiceDelta> {
  const pending = new Map<Choice, Promise<Settled>>();
  const read = (choice: Choice) =>
    pending.set(
      choice,
      choice.stream.next().then(
        (result) => ({ choice, result }),
        (error: unknown) => ({ choice, error }),
      ),
    );
  for (const choice of choices) read(choice);
  try {
    while (pending.size > 0) {
      const settled = await Promise.race(pending.values());
      pending.delete(settled.choice);
      if ("error" in settled) throw settled.error;
      if (settled.result.done) continue;
      yield { choice: settled.choice, delta: settled.result.value };
      read(settled.choice);
    }
  } finally {
    // Every choice, not only those with a read outstanding: the one just yielded has none. Ending a
    // finished stream sends nothing.
    await Promise.all(choices.map((c) => c.stream.return().catch(() => {})));
  }
}
