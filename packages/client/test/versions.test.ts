// The client against an engine of every vLLM version it supports: the mock engine, a real child process
// on real ZeroMQ sockets, plays v0.22.1, v0.23.0, v0.24.0, v0.25.1 or the pin (--vllm-version) with
// that version's registration, output and stats layouts, utility methods and wake_up semantics. One
// engine per version for the whole file, started together; each version's block ends with its engine's
// death. Expected values are written from each tag's vLLM code, not from the codec's tables.

import { EngineDeadError, VllmEngineCoreError } from "@vllm-engine-core/errors";
import {
  expectedTokens,
  type MockEngineEvent,
  promptLogprobs,
  sampleLogprobs,
} from "@vllm-engine-core/mock-engine";
import type { Tensor } from "@vllm-engine-core/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTRATION_FIELDS, registrationPresence } from "../scripts/info-table.js";
import { UtilityCallError } from "../src/errors.js";
import type { EngineCoreOutput } from "../src/index.js";
import { connectToMockEngine, type Harness } from "./helpers.js";

const VERSIONS = ["0.22", "0.23", "0.24", "0.25", "main"] as const;
type Version = (typeof VERSIONS)[number];
const COLUMN: Record<Version, number> = { "0.22": 0, "0.23": 1, "0.24": 2, "0.25": 3, main: 4 };
const before = (v: Version, release: Version) => COLUMN[v] < COLUMN[release];

const harnesses = new Map<Version, Harness>();
beforeAll(async () => {
  const started = await Promise.allSettled(
    VERSIONS.map(async (vllmVersion) => {
      const harness = await connectToMockEngine({
        vllmVersion,
        logStats: true,
        stepMs: 2,
        env: { MOCK_ENGINE_LOG_STEPS: "1" },
      });
      harnesses.set(vllmVersion, harness);
    }),
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}, 60_000);
afterAll(async () => {
  await Promise.all([...harnesses.values()].map((h) => h.close()));
});

async function outputsOf(stream: AsyncIterable<EngineCoreOutput>): Promise<EngineCoreOutput[]> {
  const outputs: EngineCoreOutput[] = [];
  for await (const output of stream) outputs.push(output);
  return outputs;
}

function plain(t: Tensor): { dtype: string; shape: readonly number[]; data: number[] } {
  return { dtype: t.dtype, shape: t.shape, data: Array.from(t.data as ArrayLike<number>) };
}

describe.each(VERSIONS)("against a vLLM %s engine", (version) => {
  const h = () => harnesses.get(version)!;

  it("connects: the version's registration decodes and every getter reports only what it sends", () => {
    const { client } = h();
    const registration = client.readyResponses[0]!;
    expect(Object.keys(registration)).toHaveLength(
      { "0.22": 4, "0.23": 6, "0.24": 10, "0.25": 10, main: 18 }[version],
    );
    // The README's table (generated from the codec's field tables) says the same for every field.
    const presence = registrationPresence().rows;
    for (const field of REGISTRATION_FIELDS) {
      const reported = presence.find((r) => r.wire === field.wire)!.cells[COLUMN[version]];
      expect(Object.hasOwn(registration, field.key), field.key).toBe(reported);
    }
    expect(client.modelDtype).toBe("bfloat16");
    expect(client.maxModelLen).toBe(4096);
    expect(client.totalNumGpuBlocks).toBe(8192);
    const vllmVersion = { "0.22": undefined, "0.23": "0.23.0", "0.24": "0.24.0", "0.25": "0.25.1" };
    if (version === "main") expect(client.vllmVersion).toMatch(/^0\.26\.0\.dev/);
    else expect(client.vllmVersion).toBe(vllmVersion[version]);
    expect(client.blockSize).toBe(version === "0.22" ? undefined : 16);
    expect(client.worldSize).toBe(before(version, "0.24") ? undefined : 1);
    expect(client.dataParallelSize).toBe(before(version, "0.24") ? undefined : 1);
    expect(registration.kvCacheSizeTokens).toBe(before(version, "0.24") ? undefined : 8192 * 16);
    expect(registration.tensorParallelSize).toBe(version === "main" ? 1 : undefined);
    expect(registration.maxNumSeqs).toBe(version === "main" ? 256 : undefined);
  });

  it("streams requests with exact tokens, sample and prompt logprobs, and the first output's PrefillStats", async () => {
    const { client } = h();
    const prompt = [5, 4, 3, 2, 1];
    const plainReq = (id: string, maxTokens: number) => ({
      requestId: `${version}-${id}`,
      promptTokenIds: prompt,
      samplingParams: { maxTokens },
    });
    const lp = { ...plainReq("lp", 5), samplingParams: { maxTokens: 5, logprobs: 2, promptLogprobs: 1 } };
    const [a, b, withLogprobs] = await Promise.all(
      [plainReq("a", 7), plainReq("b", 3), lp].map(async (r) => outputsOf(await client.call(r))),
    );
    expect(a!.flatMap((o) => o.newTokenIds)).toEqual(expectedTokens(`${version}-a`, prompt, 7));
    expect(b!.flatMap((o) => o.newTokenIds)).toEqual(expectedTokens(`${version}-b`, prompt, 3));
    expect(a!.at(-1)!.finishReason).toBe(1); // LENGTH

    const id = `${version}-lp`;
    expect(withLogprobs!.flatMap((o) => o.newTokenIds)).toEqual(expectedTokens(id, prompt, 5));
    let position = 0;
    for (const output of withLogprobs!) {
      const expected = sampleLogprobs(id, position, output.newTokenIds, 2);
      const lists = output.newLogprobs!;
      expect(plain(lists.logprobTokenIds)).toEqual(plain(expected.logprobTokenIds));
      expect(plain(lists.logprobs)).toEqual(plain(expected.logprobs));
      expect(plain(lists.sampledTokenRanks)).toEqual(plain(expected.sampledTokenRanks));
      position += output.newTokenIds.length;
    }
    const expectedPrompt = promptLogprobs(id, prompt, 1);
    const promptTensors = withLogprobs![0]!.newPromptLogprobsTensors!;
    expect(plain(promptTensors.logprobs)).toEqual(plain(expectedPrompt.logprobs));
    expect(plain(promptTensors.logprobTokenIds)).toEqual(plain(expectedPrompt.logprobTokenIds));

    // vLLM attaches the request's PrefillStats to its first output in every version (Request.__init__,
    // Scheduler.update_from_output); num_cache_creation_tokens exists only at main.
    for (const outputs of [a!, b!, withLogprobs!]) {
      const stats = outputs[0]!.prefillStats!;
      expect(stats).toMatchObject({ numPromptTokens: 5, numComputedTokens: 5, numCachedTokens: 0 });
      expect(Object.hasOwn(stats, "numCacheCreationTokens")).toBe(version === "main");
      expect(outputs.slice(1).every((o) => o.prefillStats === null)).toBe(true);
      // ec_transfer_params is absent from a 13-element output, not null.
      expect(Object.hasOwn(outputs[0]!, "ecTransferParams")).toBe(version === "main");
    }
  });

  it("decodes the version's SchedulerStats on every step: no output message was undecodable", async () => {
    const { client, engine } = h();
    // The streams above took 7 steps (the event log may trail the outputs a little).
    await engine.waitForEvent((e: MockEngineEvent) => e.event === "step" && Number(e.step) >= 7);
    const steps = engine.events.filter((e: MockEngineEvent) => e.event === "step");
    expect(steps.every((e) => e.schedulerStats === true)).toBe(true);
    const diagnostics = await client.diagnostics();
    expect(diagnostics.undecodableOutputMessages).toBe(0);
    expect(diagnostics.lastProtocolError).toBeNull();
    expect(client.isHealthy).toBe(true);
  });

  it("utilities: the version's methods answer; get_weight_version fails where the version lacks it", async () => {
    const { client } = h();
    expect(await client.getSupportedTasks()).toEqual(["generate"]);
    if (version === "main") {
      expect(await client.getWeightVersion()).toBe("default");
    } else {
      const error = await client.getWeightVersion().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VllmEngineCoreError);
      expect((error as Error).message).toContain("get_weight_version");
      // Sent to the engine: vLLM's getattr failure comes back (a client that knows the version may
      // refuse the call before sending it, with its own typed error naming the method).
      if (error instanceof UtilityCallError) {
        expect(error.failureMessage).toBe(
          "Call to get_weight_version method failed: 'EngineCoreProc' object has no attribute 'get_weight_version'",
        );
      }
    }
    // Partial wake_up(tags): before v0.24 it resumes the scheduler; from v0.24 it stays paused until
    // the executor is fully awake (vllm/v1/engine/core.py EngineCore.wake_up, 93ec6458).
    await client.sleep(1);
    await client.wakeUp(["weights"]);
    expect(await client.isSchedulerPaused()).toBe(!before(version, "0.24"));
    expect(await client.isSleeping()).toBe(true);
    await client.wakeUp(["kv_cache"]);
    expect(await client.isSchedulerPaused()).toBe(false);
    expect(await client.isSleeping()).toBe(false);
  });

  it("an engine SIGKILL fails its stream with EngineDeadError", async () => {
    const { client, engine } = h();
    const stream = await client.call({
      requestId: `${version}-doomed`,
      promptTokenIds: [1, 2, 3],
      samplingParams: { maxTokens: 100_000 },
    });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false); // running on the engine
    engine.kill("SIGKILL");
    const error = await (async () => {
      for (;;) if ((await iterator.next()).done) return undefined;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineDeadError);
    expect(client.healthError).toBeInstanceOf(EngineDeadError);
    expect(await engine.exited).toEqual({ code: null, signal: "SIGKILL" });
  });
});
