// Our client against vLLM's real engine core (scheduler, KV-cache manager, prefix cache, output
// processing: vLLM's code) with the model-free executor standing in for the model. One engine per
// describe block (start-up is 8-15 s idle), many scenarios on its one client connection.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EngineCoreClient, FinishReason } from "@vllm-engine-core/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectToRealEngine, freePort, type RealEngine, startRealEngine } from "../../src/index.ts";
import { collect, kit, title } from "./tier.ts";

function range(start: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => start + i);
}

/** Starts an engine and connects one client; stops both after the block. */
function useEngine(options: Omit<Parameters<typeof startRealEngine>[0], "kit" | "port">) {
  const state: { engine: RealEngine | null; client: EngineCoreClient | null } = {
    engine: null,
    client: null,
  };
  beforeAll(async () => {
    if (!kit) return;
    state.engine = startRealEngine({ kit, port: await freePort(), ...options });
    state.client = await connectToRealEngine(state.engine);
  });
  afterAll(async () => {
    await state.client?.shutdown().catch(() => {});
    await state.engine?.stop();
  });
  return state;
}

const scriptDir = mkdtempSync(join(tmpdir(), "real-engine-script-"));
const scriptFile = join(scriptDir, "script.json");
// A prompt containing [7001, 7002, 7003] is answered [42, 43, 44] then EOS (151645, the config's).
writeFileSync(
  scriptFile,
  JSON.stringify({ rules: [{ prompt_contains: [7001, 7002, 7003], output: [42, 43, 44], end: "eos" }] }),
);
afterAll(() => rmSync(scriptDir, { recursive: true, force: true }));

// Emulated forward time per step: small, so the scenarios stay fast, but measurable.
const STEP_MS = 20;

for (const asyncScheduling of [false, true]) {
  describe.skipIf(!kit)(title(`real engine, ${asyncScheduling ? "async" : "sync"} scheduling`), () => {
    // max-num-batched-tokens 32: a 100-token prompt is prefilled in four chunks (32, 32, 32, 4).
    const state = useEngine({
      asyncScheduling,
      maxModelLen: 1024,
      maxNumBatchedTokens: 32,
      executor: { scriptFile, stepMs: STEP_MS, logRequests: true },
    });
    const client = () => {
      if (!state.client) throw new Error("no client");
      return state.client;
    };

    it(`runs with vLLM's async_scheduling=${asyncScheduling ? "True" : "False"}`, async () => {
      if (!state.engine) throw new Error("no engine");
      await state.engine.waitForLog(
        new RegExp(`async_scheduling=${asyncScheduling ? "True" : "False"}`),
        10_000,
      );
    });

    it("streams the scripted ids exactly and finishes with LENGTH", async () => {
      const scripted = [11, 22, 33, 44, 55];
      const got = await collect(
        await client().call({
          requestId: `scripted-${asyncScheduling}`,
          promptTokenIds: [151644, 872, 198, 9707],
          samplingParams: { maxTokens: 5, extraArgs: { scripted_token_ids: scripted } },
        }),
      );
      expect(got.tokenIds).toEqual(scripted);
      expect(got.finishReason).toBe(FinishReason.LENGTH);
    });

    it("emits no token for partial prefill chunks: a chunked 100-token prompt still yields exactly the script", async () => {
      const scripted = [101, 102, 103];
      const got = await collect(
        await client().call({
          requestId: `chunked-${asyncScheduling}`,
          promptTokenIds: range(20_000, 100),
          samplingParams: { maxTokens: 3, extraArgs: { scripted_token_ids: scripted } },
        }),
      );
      expect(got.tokenIds).toEqual(scripted);
      expect(got.outputs[0]?.newTokenIds).toEqual([101]);
      expect(got.finishReason).toBe(FinishReason.LENGTH);
    });

    it("returns sample logprobs and prompt logprobs in the sampler's shapes", async () => {
      const prompt = range(30_000, 40); // chunked too: prompt logprobs arrive once, whole
      const got = await collect(
        await client().call({
          requestId: `logprobs-${asyncScheduling}`,
          promptTokenIds: prompt,
          samplingParams: {
            maxTokens: 3,
            logprobs: 2,
            promptLogprobs: 1,
            extraArgs: { scripted_token_ids: [7, 8, 9] },
          },
        }),
      );
      expect(got.tokenIds).toEqual([7, 8, 9]);
      for (const output of got.outputs) {
        const lp = output.newLogprobs;
        expect(lp).not.toBeNull();
        if (!lp) continue;
        expect(lp.logprobTokenIds.dtype).toBe("<i4");
        expect(lp.logprobs.dtype).toBe("<f4");
        expect(lp.sampledTokenRanks.dtype).toBe("<i8");
        expect(lp.logprobTokenIds.shape).toEqual([output.newTokenIds.length, 3]);
        // Column 0 is the sampled token; greedy: it is also the top-1.
        expect(Number(lp.logprobTokenIds.data[0])).toBe(output.newTokenIds[0]);
        expect(Number(lp.logprobTokenIds.data[1])).toBe(output.newTokenIds[0]);
        expect(Number(lp.sampledTokenRanks.data[0])).toBe(1);
      }
      const withPrompt = got.outputs.filter((o) => o.newPromptLogprobsTensors !== null);
      expect(withPrompt).toHaveLength(1);
      const plp = withPrompt[0]?.newPromptLogprobsTensors;
      expect(plp?.logprobTokenIds.shape).toEqual([prompt.length - 1, 2]);
      expect(Number(plp?.logprobTokenIds.data[0])).toBe(prompt[1]);
    });

    it("answers a prompt the script file matches, then EOS (STOP)", async () => {
      const got = await collect(
        await client().call({
          requestId: `by-prompt-${asyncScheduling}`,
          promptTokenIds: [151644, 7001, 7002, 7003, 198],
          samplingParams: { maxTokens: 10, eosTokenId: 151645 },
        }),
      );
      expect(got.tokenIds).toEqual([42, 43, 44, 151645]);
      expect(got.finishReason).toBe(FinishReason.STOP);
    });

    it("is deterministic past the script and serves a repeated prompt from vLLM's prefix cache", async () => {
      const prompt = range(40_000, 40);
      const first = await client().call({
        requestId: `det-a-${asyncScheduling}`,
        promptTokenIds: prompt,
        samplingParams: { maxTokens: 4 },
      });
      const a = await collect(first);
      const second = await client().call({
        requestId: `det-b-${asyncScheduling}`,
        promptTokenIds: prompt,
        samplingParams: { maxTokens: 4 },
      });
      const b = await collect(second);
      expect(a.tokenIds).toHaveLength(4);
      expect(b.tokenIds).toEqual(a.tokenIds);
      expect(second.timings?.numCachedTokens).toBe(32); // two full 16-token blocks of the 40
    });

    it("takes the emulated forward time per step, steps back to back even with async scheduling", async () => {
      const started = performance.now();
      const got = await collect(
        await client().call({
          requestId: `timed-${asyncScheduling}`,
          promptTokenIds: [9, 9, 9],
          samplingParams: { maxTokens: 10 },
        }),
      );
      expect(got.tokenIds).toHaveLength(10);
      // 10 steps (1 prefill + 9 decode) of at least STEP_MS each.
      expect(performance.now() - started).toBeGreaterThanOrEqual(10 * STEP_MS);
    });

    it("an abort from our client reaches the real engine, which frees the request mid-generation", async () => {
      if (!state.engine) throw new Error("no engine");
      const id = `aborted-${asyncScheduling}`;
      const stream = await client().call({
        requestId: id,
        promptTokenIds: [4, 5, 6],
        samplingParams: { maxTokens: 500 },
      });
      let seen = 0;
      for await (const output of stream) {
        seen += output.newTokenIds.length;
        if (seen >= 2) break; // leaving the stream early aborts the request on the engine
      }
      const line = await state.engine.waitForLog(
        new RegExp(`request ${id} finished after \\d+ outputs`),
        30_000,
      );
      const outputs = Number(/after (\d+) outputs/.exec(line)?.[1]);
      expect(outputs).toBeGreaterThanOrEqual(2);
      expect(outputs).toBeLessThan(500);
    });

    it("respects min_tokens: a scripted stop token before min_tokens is replaced, as vLLM's sampler masks it", async () => {
      const got = await collect(
        await client().call({
          requestId: `min-tokens-${asyncScheduling}`,
          promptTokenIds: [1, 2, 3],
          samplingParams: {
            maxTokens: 6,
            minTokens: 3,
            stopTokenIds: [500],
            extraArgs: { scripted_token_ids: [500, 501, 502, 500, 503] },
          },
        }),
      );
      expect(got.tokenIds.slice(0, 3)).not.toContain(500);
      expect(got.tokenIds.slice(1, 3)).toEqual([501, 502]);
      // From the 4th token on the stop token may be sampled, and the engine stops on it (kept in the ids).
      expect(got.tokenIds[3]).toBe(500);
      expect(got.tokenIds).toHaveLength(4);
      expect(got.finishReason).toBe(FinishReason.STOP);
    });
  });
}

describe.skipIf(!kit)(title("real engine, failure at step 3"), () => {
  const state = useEngine({ maxModelLen: 1024, executor: { failAtStep: 3 } });

  it("fails the stream with the client's engine-dead error and the engine logs the executor's failure", async () => {
    const client = state.client;
    if (!client || !state.engine) throw new Error("no engine");
    const stream = await client.call({
      requestId: "doomed",
      promptTokenIds: [1, 2, 3],
      samplingParams: { maxTokens: 20 },
    });
    const error = await collect(stream).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "ENGINE_DEAD" });
    await state.engine.waitForLog(/failing step 3 on purpose/, 30_000);
  });
});
