// The client's (packages/client, EngineCoreClient) acceptance scenarios against vLLM's real engine core:
// streams, the three forms of abort (client.abort(ids), the call's AbortSignal, leaving the stream), each
// seen by the engine; logprobs and prompt logprobs sent inline and as aux frames; scheduler stats with
// iteration details; more concurrent requests than max_num_seqs with chunked prefill; prefix-cache hits;
// the max_model_len boundary. One engine for the whole file (start-up dominates its time).
import {
  type EngineCoreClient,
  type EngineCoreOutput,
  FinishReason,
  InvalidRequestError,
  type SchedulerStats,
} from "@vllm-engine-core/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectToRealEngine, freePort, type RealEngine, startRealEngine } from "../../src/index.ts";
import { collect, kit, title } from "./tier.ts";

function range(start: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => start + i);
}

const MAX_MODEL_LEN = 512;
const MAX_NUM_SEQS = 4;
const BATCHED_TOKENS = 64;
// vLLM's msgpack encoder sends an array of at least VLLM_MSGPACK_ZERO_COPY_THRESHOLD bytes (default 256)
// as its own aux frame and a smaller one inline (vllm/v1/serial_utils.py MsgpackEncoder._encode_ndarray).
const ZERO_COPY_THRESHOLD = 256;

/**
 * Witness of an aux frame on our side: the runtime hands each aux frame over as its own buffer, so the
 * decoded array spans all of it; an inline tensor is a view into the message's main frame (or, when
 * misaligned, a copy — so only the aux side is asserted this way).
 */
function spansItsOwnBuffer(data: ArrayBufferView): boolean {
  return data.byteOffset === 0 && data.buffer.byteLength === data.byteLength;
}

describe.skipIf(!kit)(title("client acceptance against vLLM's real engine core"), () => {
  const state: { engine: RealEngine | null; client: EngineCoreClient | null } = {
    engine: null,
    client: null,
  };
  const stats: SchedulerStats[] = [];
  beforeAll(async () => {
    if (!kit) return;
    state.engine = startRealEngine({
      kit,
      port: await freePort(),
      maxModelLen: MAX_MODEL_LEN,
      maxNumSeqs: MAX_NUM_SEQS,
      maxNumBatchedTokens: BATCHED_TOKENS,
      // Stats are on (no --disable-log-stats); iteration details need their own flag.
      extraFlags: ["--max-logprobs", "100", "--enable-logging-iteration-details"],
      executor: { stepMs: 5, logRequests: true },
    });
    state.client = await connectToRealEngine(state.engine);
    state.client.onSchedulerStats((_engine, s) => stats.push(s));
  });
  afterAll(async () => {
    await state.client?.shutdown().catch(() => {});
    await state.engine?.stop();
  });
  const client = () => {
    if (!state.client) throw new Error("no client");
    return state.client;
  };
  const engine = () => {
    if (!state.engine) throw new Error("no engine");
    return state.engine;
  };
  /** The engine freed the request after this many outputs (the executor's log_requests line). */
  const freedAfter = async (requestId: string) => {
    const line = await engine().waitForLog(
      new RegExp(`request ${requestId} finished after \\d+ outputs`),
      30_000,
    );
    return Number(/after (\d+) outputs/.exec(line)?.[1]);
  };

  it("streams exact scripted ids, one output per step, ending with LENGTH and engine timings", async () => {
    const scripted = [901, 902, 903, 904, 905, 906];
    const stream = await client().call({
      requestId: "stream",
      promptTokenIds: [7, 8, 9],
      samplingParams: { maxTokens: 6, extraArgs: { scripted_token_ids: scripted } },
    });
    const got = await collect(stream);
    expect(got.tokenIds).toEqual(scripted);
    expect(got.outputs.every((o) => o.newTokenIds.length === 1)).toBe(true);
    expect(got.finishReason).toBe(FinishReason.LENGTH);
    expect(stream.timings?.clock).toBe("engine");
    expect(stream.timings?.numGenerationTokens).toBe(6);
    expect(stream.timings?.finishedBy).toBe("engine");
    expect(await freedAfter("stream")).toBe(6);
  });

  it("abort by client.abort(ids): the stream ends with ABORT and the engine frees the request", async () => {
    const stream = await client().call({
      requestId: "abort-ids",
      promptTokenIds: [10, 11],
      samplingParams: { maxTokens: 400 },
    });
    const outputs: EngineCoreOutput[] = [];
    for await (const output of stream) {
      outputs.push(output);
      if (outputs.length === 2) await client().abort(["abort-ids"]);
    }
    expect(outputs[outputs.length - 1]?.finishReason).toBe(FinishReason.ABORT);
    expect(stream.timings?.finishedBy).toBe("client");
    const freed = await freedAfter("abort-ids");
    expect(freed).toBeGreaterThanOrEqual(2);
    expect(freed).toBeLessThan(400);
  });

  it("abort by the call's AbortSignal: the pending read rejects with the reason and the engine frees the request", async () => {
    const controller = new AbortController();
    const stream = await client().call(
      { requestId: "abort-signal", promptTokenIds: [12, 13], samplingParams: { maxTokens: 400 } },
      { signal: controller.signal },
    );
    const reason = new Error("caller gave up");
    let seen = 0;
    const read = (async () => {
      for await (const output of stream) {
        seen += output.newTokenIds.length;
        if (seen === 2) controller.abort(reason);
      }
    })();
    await expect(read).rejects.toBe(reason);
    const freed = await freedAfter("abort-signal");
    expect(freed).toBeGreaterThanOrEqual(2);
    expect(freed).toBeLessThan(400);
  });

  it("abort by leaving the stream (break → return()): the engine frees the request", async () => {
    const stream = await client().call({
      requestId: "abort-break",
      promptTokenIds: [14, 15],
      samplingParams: { maxTokens: 400 },
    });
    let seen = 0;
    for await (const output of stream) {
      seen += output.newTokenIds.length;
      if (seen >= 3) break;
    }
    const freed = await freedAfter("abort-break");
    expect(freed).toBeGreaterThanOrEqual(3);
    expect(freed).toBeLessThan(400);
    // The engine runs nothing any more: its next stats show no running or waiting request.
    await expect.poll(() => stats[stats.length - 1]?.numRunningReqs, { timeout: 10_000 }).toBe(0);
  });

  it("sample logprobs: small tensors inline, large ones (many logprobs) as aux frames, decoded alike", async () => {
    for (const [id, k] of [
      ["logprobs-inline", 2],
      ["logprobs-aux", 80],
    ] as const) {
      const got = await collect(
        await client().call({
          requestId: id,
          promptTokenIds: [16, 17, 18],
          samplingParams: { maxTokens: 3, logprobs: k, extraArgs: { scripted_token_ids: [500, 600, 700] } },
        }),
      );
      expect(got.tokenIds).toEqual([500, 600, 700]);
      for (const output of got.outputs) {
        const lp = output.newLogprobs;
        if (!lp) throw new Error(`${id}: no logprobs`);
        expect(lp.logprobTokenIds.shape).toEqual([1, k + 1]);
        const bytes = (k + 1) * 4;
        expect(bytes >= ZERO_COPY_THRESHOLD).toBe(k === 80); // int32 ids / float32 logprobs: aux at k = 80
        if (k === 80) {
          expect(spansItsOwnBuffer(lp.logprobTokenIds.data)).toBe(true);
          expect(spansItsOwnBuffer(lp.logprobs.data)).toBe(true);
        }
        const t = output.newTokenIds[0] as number;
        // Column 0 the sampled token, then top-k: token (t + j) with logprob -0.25 - 0.5 j (the executor's rule).
        const ids = Array.from(lp.logprobTokenIds.data as ArrayLike<number>, Number);
        expect(ids).toEqual([t, ...range(0, k).map((j) => (t + j) % 151_936)]);
        const values = Array.from(lp.logprobs.data as ArrayLike<number>, Number);
        expect(values[0]).toBeCloseTo(-0.25, 5);
        expect(values[k]).toBeCloseTo(-0.25 - 0.5 * (k - 1), 5);
        expect(Number(lp.sampledTokenRanks.data[0])).toBe(1);
      }
    }
  });

  it("prompt logprobs: a short prompt inline, a long chunked prompt as aux frames, once and whole", async () => {
    for (const [id, prompt, k] of [
      ["prompt-lp-inline", range(40_000, 10), 1],
      ["prompt-lp-aux", range(41_000, 150), 2],
    ] as const) {
      const got = await collect(
        await client().call({
          requestId: id,
          promptTokenIds: prompt,
          samplingParams: { maxTokens: 1, promptLogprobs: k, extraArgs: { scripted_token_ids: [3] } },
        }),
      );
      const withPrompt = got.outputs.filter((o) => o.newPromptLogprobsTensors !== null);
      expect(withPrompt).toHaveLength(1);
      const plp = withPrompt[0]?.newPromptLogprobsTensors;
      if (!plp) throw new Error("no prompt logprobs");
      expect(plp.logprobTokenIds.shape).toEqual([prompt.length - 1, k + 1]);
      expect((prompt.length - 1) * (k + 1) * 4 >= ZERO_COPY_THRESHOLD).toBe(prompt.length === 150);
      if (prompt.length === 150) expect(spansItsOwnBuffer(plp.logprobTokenIds.data)).toBe(true);
      const ids = Array.from(plp.logprobTokenIds.data as ArrayLike<number>, Number);
      const column0 = range(0, prompt.length - 1).map((row) => ids[row * (k + 1)]);
      expect(column0).toEqual(prompt.slice(1));
    }
  });

  it("scheduler stats carry iteration details (context and generation tokens of real steps)", async () => {
    const before = stats.length;
    await collect(
      await client().call({
        requestId: "iteration",
        promptTokenIds: range(100, 40),
        samplingParams: { maxTokens: 4 },
      }),
    );
    await expect.poll(() => stats.length, { timeout: 10_000 }).toBeGreaterThan(before);
    const details = stats
      .slice(before)
      .map((s) => s.iterationDetails)
      .filter((d) => d != null);
    expect(details.length).toBeGreaterThan(0);
    expect(details.some((d) => d.numCtxTokens === 40 && d.numCtxRequests === 1)).toBe(true);
    expect(details.some((d) => d.numGenerationTokens >= 1 && d.numGenerationRequests >= 1)).toBe(true);
    const indices = details.map((d) => d.iterationIndex);
    expect([...indices].sort((a, b) => a - b)).toEqual(indices);
  });

  it(`more concurrent requests than max_num_seqs (${MAX_NUM_SEQS}), chunked prompts: all finish with exact ids`, async () => {
    const before = stats.length;
    const n = 12;
    const results = await Promise.all(
      range(0, n).map(async (i) => {
        const scripted = range(2000 + 10 * i, 5);
        const got = await collect(
          await client().call({
            requestId: `load-${i}`,
            // 100 tokens: more than the 64-token step budget, so prefills are chunked.
            promptTokenIds: range(50_000 + 100 * i, 100),
            samplingParams: { maxTokens: 5, extraArgs: { scripted_token_ids: scripted } },
          }),
        );
        return { scripted, got };
      }),
    );
    for (const { scripted, got } of results) {
      expect(got.tokenIds).toEqual(scripted);
      expect(got.finishReason).toBe(FinishReason.LENGTH);
    }
    const seen = stats.slice(before);
    expect(Math.max(...seen.map((s) => s.numRunningReqs))).toBe(MAX_NUM_SEQS);
    expect(Math.max(...seen.map((s) => s.numWaitingReqs))).toBeGreaterThan(0);
    expect(seen.some((s) => (s.iterationDetails?.numCtxTokens ?? 0) === BATCHED_TOKENS)).toBe(true);
  });

  it("a repeated prompt hits the prefix cache: prefillStats.numCachedTokens > 0", async () => {
    const prompt = range(60_000, 70); // four full 16-token blocks
    const first = await client().call({
      requestId: "prefix-1",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: 1 },
    });
    const a = await collect(first);
    const second = await client().call({
      requestId: "prefix-2",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: 1 },
    });
    const b = await collect(second);
    expect(a.outputs[0]?.prefillStats?.numCachedTokens ?? 0).toBe(0);
    const cached = b.outputs.find((o) => o.prefillStats != null)?.prefillStats?.numCachedTokens;
    expect(cached).toBe(64);
    expect(second.timings?.numCachedTokens).toBe(64);
    expect(b.tokenIds).toEqual(a.tokenIds); // same prompt, same deterministic ids
  });

  it("max_model_len: a prompt of exactly max_model_len is refused with vLLM's wording; one token shorter completes", async () => {
    expect(client().maxModelLen).toBe(MAX_MODEL_LEN);
    const refused = await client()
      .call({
        requestId: "too-long",
        promptTokenIds: range(1000, MAX_MODEL_LEN),
        samplingParams: { maxTokens: 1 },
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect((refused as Error).message).toContain(
      `The decoder prompt (length ${MAX_MODEL_LEN}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${MAX_MODEL_LEN}.`,
    );
    const fits = await collect(
      await client().call({
        requestId: "fits",
        promptTokenIds: range(1000, MAX_MODEL_LEN - 1),
        samplingParams: { maxTokens: 1, extraArgs: { scripted_token_ids: [77] } },
      }),
    );
    expect(fits.tokenIds).toEqual([77]);
    expect(fits.finishReason).toBe(FinishReason.LENGTH);
  });
});
