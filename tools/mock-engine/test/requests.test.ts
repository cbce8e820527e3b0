import {
  encodeAddRequest,
  encodeStartDpWave,
  encodeValue,
  FinishReason,
  RequestType,
} from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  expectedTokens,
  type MockEngineOptions,
  type MockEngineProcess,
  modelFreeToken,
  promptSeed,
  startMockEngine,
} from "../src/index.js";
import { delay, type FrontendOptions, RawFrontend, request } from "./harness.js";

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  engine = undefined;
  frontend = undefined;
});

async function setup(options: Partial<MockEngineOptions> = {}, fe: FrontendOptions = {}) {
  frontend = await RawFrontend.create(fe);
  const engineIndices = options.engineIndices ?? [0];
  engine = await startMockEngine({
    stepMs: 2,
    ...options,
    handshakeAddress: frontend.handshakeAddress,
    engineIndices,
  });
  await frontend.connect(engineIndices);
  return { frontend, engine };
}

describe("requests", () => {
  it("generates expectedTokens and finishes with LENGTH at max_tokens", async () => {
    const { frontend, engine } = await setup();
    const req = request("len", { maxTokens: 7 }, { promptTokenIds: [5, 6, 7, 8] });
    await frontend.add(0, req);
    const { tokens, last, messages } = await frontend.finished("len");
    expect(tokens).toEqual(expectedTokens("len", [5, 6, 7, 8], 7));
    expect(last.finishReason).toBe(FinishReason.LENGTH);
    expect(last.stopReason).toBeNull();
    // One token per step: one message per step, none after the finish.
    expect(messages).toHaveLength(7);
    expect(messages.every((m) => m.engineIndex === 0 && m.utilityOutput === null)).toBe(true);
    const finished = await engine.waitForEvent((e) => e.event === "finished" && e.requestId === "len");
    expect(finished).toMatchObject({ finishReason: 1, tokens: 7 });
    const add = engine.events.find((e) => e.event === "add")!;
    expect(add).toMatchObject({ requestId: "len", engineIndex: 0, clientIndex: 0, maxTokens: 7 });
  });

  it("sends one EngineCoreOutputs per step for all running requests of the client", async () => {
    const { frontend } = await setup({ stepMs: 20 });
    const ids = ["a", "b", "c"];
    // Sent back to back: they are admitted in the same step.
    await Promise.all(ids.map((id) => frontend.add(0, request(id, { maxTokens: 5 }))));
    for (const id of ids) await frontend.finished(id);
    const batches = frontend.received.items.filter((m) => m.kind === "outputs");
    const sizes = batches.map((m) => (m.kind === "outputs" ? m.outputs.outputs.length : 0));
    expect(Math.max(...sizes)).toBe(3);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(15);
    for (const id of ids) {
      expect((await frontend.finished(id)).tokens).toEqual(expectedTokens(id, [1, 2, 3], 5));
    }
  });

  it("finishes with STOP and stop_reason on a stop_token_ids hit", async () => {
    const { frontend } = await setup();
    const stream = expectedTokens("stop", [1, 2, 3], 10);
    const stopToken = stream[4]!;
    await frontend.add(0, request("stop", { maxTokens: 10, stopTokenIds: [stopToken] }));
    const { tokens, last } = await frontend.finished("stop");
    expect(tokens).toEqual(stream.slice(0, stream.indexOf(stopToken) + 1));
    expect(last.finishReason).toBe(FinishReason.STOP);
    expect(last.stopReason).toBe(stopToken);
  });

  it("finishes with STOP without stop_reason on _eos_token_id, and honours min_tokens", async () => {
    const { frontend } = await setup();
    const stream = expectedTokens("eos", [1, 2, 3], 12);
    const eos = stream[2]!;
    await frontend.add(0, request("eos", { maxTokens: 12, eosTokenId: eos }));
    const a = await frontend.finished("eos");
    expect(a.tokens).toEqual(stream.slice(0, stream.indexOf(eos) + 1));
    expect(a.last.finishReason).toBe(FinishReason.STOP);
    expect(a.last.stopReason).toBeNull();

    // The same request with min_tokens past the EOS position runs on (unless EOS recurs later): the
    // min-tokens logits processor masks EOS, so that position holds another id (the model-free executor's
    // choice: its deterministic id for that position).
    const id = "eos-min";
    const s2 = expectedTokens(id, [1, 2, 3], 12);
    const eos2 = s2[1]!;
    s2[1] = modelFreeToken(promptSeed([1, 2, 3]), 1);
    expect(s2[1]).not.toBe(eos2);
    const laterHit = s2.slice(5).indexOf(eos2);
    await frontend.add(0, request(id, { maxTokens: 12, minTokens: 5, eosTokenId: eos2 }));
    const b = await frontend.finished(id);
    expect(b.tokens).toEqual(laterHit === -1 ? s2 : s2.slice(0, 5 + laterHit + 1));
    expect(b.last.finishReason).toBe(laterHit === -1 ? FinishReason.LENGTH : FinishReason.STOP);
  });

  it("echoes trace_headers on every output; stops on repetition_detection with REPETITION", async () => {
    const { frontend } = await setup();
    const headers = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    await frontend.add(0, request("traced", { maxTokens: 3 }, { traceHeaders: headers }));
    const traced = await frontend.finished("traced");
    const outputs = frontend.outputsFor("traced");
    expect(outputs).toHaveLength(3);
    for (const { output } of outputs) expect(output.traceHeaders).toEqual(headers);
    expect(traced.last.finishReason).toBe(FinishReason.LENGTH);

    await frontend.add(
      0,
      request("repeats", {
        maxTokens: 10,
        extraArgs: { scripted_token_ids: [5, 6, 5, 6, 5, 6, 5, 6] },
        repetitionDetection: { maxPatternSize: 2, minPatternSize: 1, minCount: 3 },
      }),
    );
    const repeats = await frontend.finished("repeats");
    expect(repeats.tokens).toEqual([5, 6, 5, 6, 5, 6]);
    expect(repeats.last.finishReason).toBe(FinishReason.REPETITION);
    expect(repeats.last.stopReason).toBe("repetition_detected");
  });

  it("prefix caching: a repeated prompt reuses its full blocks (as measured on vLLM: 32 of 40 cached)", async () => {
    const { frontend } = await setup({ logStats: true });
    const prompt = Array.from({ length: 40 }, (_, i) => 500 + i);
    const run = async (id: string, sampling: Record<string, unknown> = {}, extra = {}) => {
      await frontend.add(0, request(id, { maxTokens: 2, ...sampling }, { promptTokenIds: prompt, ...extra }));
      await frontend.finished(id);
      const [first] = frontend.outputsFor(id);
      return { prefill: first!.output.prefillStats, stats: first!.message.schedulerStats };
    };
    const cold = await run("pc-1");
    expect(cold.prefill).toMatchObject({
      numComputedTokens: 40,
      numCachedTokens: 0,
      numCacheCreationTokens: 32,
    });
    const warm = await run("pc-2");
    expect(warm.prefill).toMatchObject({
      numPromptTokens: 40,
      numComputedTokens: 8,
      numCachedTokens: 32,
      numLocalCachedTokens: 32,
      numCacheCreationTokens: 0,
    });
    expect(warm.stats?.prefixCacheStats).toMatchObject({ requests: 1, queries: 40, hits: 32 });
    // Another cache_salt is another cache; prompt logprobs skip the lookup (and are not counted).
    expect((await run("pc-salt", {}, { cacheSalt: "s" })).prefill).toMatchObject({ numCachedTokens: 0 });
    const skipped = await run("pc-plp", { promptLogprobs: 1 });
    expect(skipped.prefill).toMatchObject({ numCachedTokens: 0 });
    expect(skipped.stats?.prefixCacheStats).toMatchObject({ requests: 0, queries: 0, hits: 0 });
    // reset_prefix_cache empties it.
    expect((await frontend.utility(0, "reset_prefix_cache")).result?.value).toBe(true);
    expect((await run("pc-3")).prefill).toMatchObject({ numCachedTokens: 0 });
  });

  it("a malformed script is fatal, as the model-free executor raising inside the step", async () => {
    const { frontend } = await setup();
    await frontend.add(0, request("bad-script", { extraArgs: { scripted_token_ids: [11, "x"] } }));
    await frontend.received.wait((m) => m.kind === "dead", 10_000, "ENGINE_CORE_DEAD");
  });

  it("emits tokensPerStep tokens per step and caps at max_tokens", async () => {
    const { frontend } = await setup({ tokensPerStep: 3 });
    await frontend.add(0, request("multi", { maxTokens: 7 }));
    const { tokens, messages, last } = await frontend.finished("multi");
    expect(tokens).toEqual(expectedTokens("multi", [1, 2, 3], 7));
    expect(messages.map((m) => m.outputs[0]!.newTokenIds.length)).toEqual([3, 3, 1]);
    expect(last.finishReason).toBe(FinishReason.LENGTH);
  });

  it("finishes with LENGTH at max_model_len", async () => {
    const { frontend } = await setup({ readyResponse: { maxModelLen: 6 } });
    await frontend.add(0, request("ctx", { maxTokens: 100 }, { promptTokenIds: [1, 2, 3, 4] }));
    const { tokens, last } = await frontend.finished("ctx");
    expect(tokens).toHaveLength(2);
    expect(last.finishReason).toBe(FinishReason.LENGTH);
  });

  it("ABORT stops a request without any output for it; the log shows the ids", async () => {
    const { frontend, engine } = await setup({ stepMs: 5 });
    await frontend.add(0, request("long", { maxTokens: 100_000 }));
    await frontend.add(0, request("other", { maxTokens: 100_000 }));
    await frontend.received.wait(
      (m) => m.kind === "outputs" && m.outputs.outputs.length > 0,
      5_000,
      "first output",
    );
    await frontend.abort(0, ["long", "unknown-id"]);
    const abort = await engine.waitForEvent((e) => e.event === "abort");
    expect(abort.requestIds).toEqual(["long", "unknown-id"]);
    expect(abort.removed).toEqual(["long"]);
    const countAfterAbort = frontend.outputsFor("long").length;
    await delay(100);
    expect(frontend.outputsFor("long")).toHaveLength(countAfterAbort);
    expect(frontend.outputsFor("long").every((o) => o.output.finishReason === null)).toBe(true);
    // The other request keeps streaming.
    const before = frontend.outputsFor("other").length;
    await delay(60);
    expect(frontend.outputsFor("other").length).toBeGreaterThan(before);
    expect(
      frontend.received.items.every((m) => m.kind !== "outputs" || m.outputs.finishedRequests === null),
    ).toBe(true);
  });

  it("routes outputs and utility replies to outputs[client_index]", async () => {
    const { frontend } = await setup({}, { frontends: 2 });
    expect(frontend.registrations.items.map((r) => r.frontend).sort()).toEqual([0, 1]);
    await frontend.add(0, request("fe1", { maxTokens: 3 }, { clientIndex: 1 }), 1);
    await frontend.add(0, request("fe0", { maxTokens: 3 }), 0);
    await frontend.finished("fe1");
    await frontend.finished("fe0");
    for (const m of frontend.received.items) {
      if (m.kind !== "outputs") continue;
      for (const o of m.outputs.outputs) expect(m.frontend).toBe(o.requestId === "fe1" ? 1 : 0);
    }
    const reply = await frontend.utility(0, "is_sleeping", [], { frontend: 1 });
    expect(reply.received.frontend).toBe(1);
  });

  it("answers a request that fails preprocessing with an ERROR output (max_tokens None, no params)", async () => {
    const { frontend, engine } = await setup();
    await frontend.add(0, request("no-max", { maxTokens: null }));
    const a = await frontend.finished("no-max");
    expect(a.last.finishReason).toBe(FinishReason.ERROR);
    expect(a.tokens).toEqual([]);
    expect(a.messages[0]!.finishedRequests).toEqual(["no-max"]);
    await frontend.add(0, request("no-params", {}, { samplingParams: null }));
    const b = await frontend.finished("no-params");
    expect(b.last.finishReason).toBe(FinishReason.ERROR);
    // The engine keeps serving.
    await frontend.add(0, request("after", { maxTokens: 2 }));
    expect((await frontend.finished("after")).tokens).toHaveLength(2);
    expect(engine.events.filter((e) => e.event === "fault").map((e) => e.kind)).toEqual([
      "preprocess-error",
      "preprocess-error",
    ]);
  });

  it("structured outputs without `_backend`: ERROR, as grammar_init raises 'Unsupported structured output backend: None'", async () => {
    const { frontend, engine } = await setup();
    await frontend.add(0, request("no-backend", { maxTokens: 3, structuredOutputs: { jsonObject: true } }));
    const a = await frontend.finished("no-backend");
    expect(a.last.finishReason).toBe(FinishReason.ERROR);
    expect(a.tokens).toEqual([]);
    const fault = await engine.waitForEvent((e) => e.event === "fault");
    expect(fault).toMatchObject({
      kind: "preprocess-error",
      requestId: "no-backend",
      detail: "Unsupported structured output backend: None",
    });
    // With the backend the frontend chose, the request runs; the add event shows what arrived.
    await frontend.add(
      0,
      request("with-backend", {
        maxTokens: 3,
        structuredOutputs: { regex: "[a-z]+", backend: "xgrammar", backendWasAuto: true },
      }),
    );
    expect((await frontend.finished("with-backend")).last.finishReason).toBe(FinishReason.LENGTH);
    const add = engine.events.find((e) => e.event === "add" && e.requestId === "with-backend");
    expect(add?.structuredOutputs).toEqual({ backend: "xgrammar", backendWasAuto: true, kinds: ["regex"] });
  });

  it("an invalid SamplingParams kills the input handling only (like vLLM's input thread)", async () => {
    const { frontend, engine } = await setup({ stepMs: 5 });
    await frontend.add(0, request("running", { maxTokens: 100_000 }));
    await frontend.received.wait((m) => m.kind === "outputs", 5_000, "first output");
    await frontend.add(0, request("bad", { maxTokens: 4, temperature: 5 }));
    const fault = await engine.waitForEvent((e) => e.event === "fault");
    expect(fault).toMatchObject({ kind: "input-thread-died", engineIndex: 0 });
    expect(String(fault.detail)).toContain("temperature must be in [0, 2], got 5.");
    // Nothing is read any more (the running request cannot even be aborted), but stepping goes on.
    await frontend.add(0, request("ignored", { maxTokens: 2 }));
    await frontend.abort(0, ["running"]);
    const before = frontend.outputsFor("running").length;
    await delay(100);
    expect(frontend.outputsFor("running").length).toBeGreaterThan(before);
    expect(frontend.outputsFor("ignored")).toHaveLength(0);
    expect(engine.events.some((e) => e.event === "add" && e.requestId === "ignored")).toBe(false);
  });

  it("an undecodable input message kills the input handling (fault event), the process stays up", async () => {
    const { frontend, engine } = await setup();
    await frontend.sendRaw(0, [Uint8Array.of(RequestType.ADD), Uint8Array.of(0xc1)]);
    const fault = await engine.waitForEvent((e) => e.event === "fault");
    expect(fault.kind).toBe("input-thread-died");
    const frames = encodeAddRequest(request("late", { maxTokens: 2 }));
    await frontend.sendRaw(0, frames);
    await delay(100);
    expect(frontend.outputsFor("late")).toHaveLength(0);
    expect(engine.events.some((e) => e.event === "exit")).toBe(false);
  });

  it("handles the engine-internal request types like vLLM: WAKEUP ignored, START_DP_WAVE logged, EXECUTOR_FAILED fatal", async () => {
    const { frontend, engine } = await setup();
    await frontend.sendRaw(0, [Uint8Array.of(RequestType.WAKEUP), encodeValue(null)]);
    await frontend.sendRaw(0, encodeStartDpWave({ wave: 1, excludeEngineIndex: null }));
    const unrecognized = await engine.waitForEvent((e) => e.event === "fault");
    expect(unrecognized).toMatchObject({
      kind: "unrecognized-request-type",
      type: RequestType.START_DP_WAVE,
    });
    await frontend.add(0, request("still-up", { maxTokens: 2 }));
    expect((await frontend.finished("still-up")).tokens).toHaveLength(2);
    await frontend.sendRaw(0, [Uint8Array.of(RequestType.EXECUTOR_FAILED), encodeValue(null)]);
    await frontend.received.wait((m) => m.kind === "dead", 10_000, "ENGINE_CORE_DEAD");
    expect((await engine.exited).code).toBe(1);
    expect(engine.events.find((e) => e.kind === "engine-dead")?.detail).toBe("Executor failed.");
  });

  it("load mode: stepMs 0 serves thousands of requests, wall timestamps are epoch seconds at send", async () => {
    const { frontend } = await setup({ stepMs: 0, timestamps: "wall", tokensPerStep: 4 });
    const n = 2000;
    const started = Date.now() / 1000;
    for (let i = 0; i < n; i++) await frontend.add(0, request(`load-${i}`, { maxTokens: 16 }));
    // Every request, not just the last one sent: a request queued behind the batch can finish after it.
    for (let i = 0; i < n; i++) await frontend.finished(`load-${i}`, 30_000);
    for (const i of [0, 1, 999, n - 1]) {
      expect((await frontend.finished(`load-${i}`)).tokens).toEqual(
        expectedTokens(`load-${i}`, [1, 2, 3], 16),
      );
    }
    const finishedIds = new Set(
      frontend.received.items
        .flatMap((m) => (m.kind === "outputs" ? m.outputs.outputs : []))
        .filter((o) => o.finishReason === FinishReason.LENGTH)
        .map((o) => o.requestId),
    );
    expect(finishedIds.size).toBe(n);
    const outputs = frontend.received.items.flatMap((m) => (m.kind === "outputs" ? [m.outputs] : []));
    const ended = Date.now() / 1000;
    for (const o of outputs) {
      expect(o.timestamp).toBeGreaterThanOrEqual(started - 1);
      expect(o.timestamp).toBeLessThanOrEqual(ended + 1);
    }
  });

  it("monotonic timestamps are not epoch seconds", async () => {
    const { frontend } = await setup();
    await frontend.add(0, request("mono", { maxTokens: 2 }));
    const { messages } = await frontend.finished("mono");
    expect(messages[0]!.timestamp).toBeGreaterThan(0);
    expect(messages[0]!.timestamp).toBeLessThan(Date.now() / 1000 - 1e6);
  });

  it("monotonic-at-send timestamps are this host's CLOCK_MONOTONIC (not epoch seconds)", async () => {
    // The clock every process of the host shares (what the bench and the probe compare arrivals with), so a
    // stamp falls between this test's own readings of it and before the frame's arrival here.
    const { frontend } = await setup({ stepMs: 20, timestamps: "monotonic-at-send" });
    const before = Number(process.hrtime.bigint()) / 1e9;
    await frontend.add(0, request("at-send", { maxTokens: 3 }));
    await frontend.finished("at-send");
    const after = Number(process.hrtime.bigint()) / 1e9;
    const hrAt = (performanceMs: number) =>
      (performanceMs - performance.now()) / 1000 + Number(process.hrtime.bigint()) / 1e9;
    const messages = frontend.received.items.flatMap((m) =>
      m.kind === "outputs" && m.outputs.outputs.some((o) => o.requestId === "at-send") ? [m] : [],
    );
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) {
      expect(m.outputs.timestamp).toBeGreaterThan(before);
      expect(m.outputs.timestamp).toBeLessThan(after);
      // Stamped before this process received the frame (generous bound: a loaded CI machine stalls).
      const arrived = hrAt(m.at);
      expect(m.outputs.timestamp).toBeLessThanOrEqual(arrived);
      expect(arrived - m.outputs.timestamp).toBeLessThan(1);
    }
  });
});
