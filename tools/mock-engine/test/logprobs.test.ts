// Sample and prompt logprobs as the mock engine emits them: the deterministic model (pure), the
// scheduler's vLLM rules (batch-wide width, prompt logprobs with the first output), the encoding (ext 3
// inline below VLLM_MSGPACK_ZERO_COPY_THRESHOLD, aux frames above it), and the same tensors decoded from
// the Buffers a real zeromq PULL socket delivers.
import { rmSync } from "node:fs";
import { decodeEngineCoreOutputs, type EngineCoreOutput, FinishReason } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  expectedLogprobsRow,
  expectedTokens,
  MOCK_VOCAB_SIZE,
  type MockEngineOptions,
  type MockEngineProcess,
  promptLogprobs,
  resolveNumLogprobs,
  sampleLogprobs,
  startMockEngine,
} from "../src/index.js";
import { MockModelError } from "../src/logprobs.js";
import { MockScheduler, type SchedRequestSpec, type StepOutput } from "../src/scheduler.js";
import { encodeOutputs, zeroCopyThreshold } from "../src/wire.js";
import { RawFrontend, type Received, request } from "./harness.js";

const V = MOCK_VOCAB_SIZE;

describe("the logprobs model", () => {
  it("ranks the whole vocabulary by strictly decreasing float32 logprobs; column 0 carries the target's rank", () => {
    const target = 1234;
    const row = expectedLogprobsRow("r", "sample", 3, target, V);
    expect(row.tokenIds).toHaveLength(V + 1);
    const top = row.tokenIds.slice(1);
    expect(new Set(top).size).toBe(V);
    expect(top.every((t) => Number.isInteger(t) && t >= 0 && t < V)).toBe(true);
    for (let r = 1; r <= V; r++) {
      expect(row.logprobs[r]).toBe(Math.fround(row.logprobs[r]!));
      if (r > 1) expect(row.logprobs[r]!).toBeLessThan(row.logprobs[r - 1]!);
    }
    expect(row.logprobs[1]!).toBeLessThan(0);
    // The rank is the target's place in the distribution (count of tokens with logprob >= its own).
    expect(row.tokenIds[row.rank]).toBe(target);
    expect(row.logprobs[0]).toBe(row.logprobs[row.rank]);
    expect(row.logprobs.filter((lp, i) => i > 0 && lp >= row.logprobs[0]!)).toHaveLength(row.rank);
    // A narrower row (a smaller K) is a prefix of the wide one.
    const narrow = expectedLogprobsRow("r", "sample", 3, target, 5);
    expect(narrow).toEqual({
      ...row,
      tokenIds: row.tokenIds.slice(0, 6),
      logprobs: row.logprobs.slice(0, 6),
    });
    // Every coordinate changes the distribution.
    for (const other of [
      expectedLogprobsRow("r2", "sample", 3, target, 5),
      expectedLogprobsRow("r", "prompt", 3, target, 5),
      expectedLogprobsRow("r", "sample", 4, target, 5),
    ]) {
      expect(other.tokenIds.slice(1)).not.toEqual(narrow.tokenIds.slice(1));
    }
  });

  it("builds sample logprobs as numpy LogprobsLists and prompt logprobs as torch LogprobsTensors", () => {
    const sample = sampleLogprobs("s", 4, [10, 11], 3);
    expect(sample.logprobTokenIds.dtype).toBe("<i4");
    expect(sample.logprobs.dtype).toBe("<f4");
    expect(sample.sampledTokenRanks.dtype).toBe("<i8");
    expect(sample.logprobTokenIds.shape).toEqual([2, 4]);
    expect(sample.logprobs.shape).toEqual([2, 4]);
    expect(sample.sampledTokenRanks.shape).toEqual([2]);
    expect(sample.logprobTokenIds.data).toBeInstanceOf(Int32Array);
    expect(sample.logprobs.data).toBeInstanceOf(Float32Array);
    expect(sample.sampledTokenRanks.data).toBeInstanceOf(BigInt64Array);
    const row1 = expectedLogprobsRow("s", "sample", 5, 11, 3);
    expect(Array.from(sample.logprobTokenIds.data.subarray(4, 8) as Int32Array)).toEqual(row1.tokenIds);
    expect(Array.from(sample.logprobs.data.subarray(4, 8) as Float32Array)).toEqual(row1.logprobs);
    expect(sample.sampledTokenRanks.data[1]).toBe(BigInt(row1.rank));

    const prompt = promptLogprobs("p", [7, 8, 9], 2);
    expect([prompt.logprobTokenIds.dtype, prompt.logprobs.dtype, prompt.selectedTokenRanks.dtype]).toEqual([
      "int32",
      "float32",
      "int32",
    ]);
    expect(prompt.logprobTokenIds.shape).toEqual([2, 3]);
    expect(prompt.selectedTokenRanks.shape).toEqual([2]);
    expect(prompt.selectedTokenRanks.data).toBeInstanceOf(Int32Array);
    // Row i scores prompt token i + 1.
    expect(Array.from(prompt.logprobTokenIds.data as Int32Array)).toEqual([
      ...expectedLogprobsRow("p", "prompt", 0, 8, 2).tokenIds,
      ...expectedLogprobsRow("p", "prompt", 1, 9, 2).tokenIds,
    ]);
    // A one-token prompt has nothing to score: empty_cpu(0, K + 1).
    const single = promptLogprobs("p", [7], 2);
    expect(single.logprobTokenIds.shape).toEqual([0, 3]);
    expect(single.selectedTokenRanks.shape).toEqual([0]);
    expect(single.logprobs.data.byteLength).toBe(0);
  });

  it("-1 is the whole vocabulary; k beyond it or an out-of-vocab prompt token fails like torch", () => {
    expect(resolveNumLogprobs(-1)).toBe(V);
    expect(resolveNumLogprobs(0)).toBe(0);
    expect(sampleLogprobs("s", 0, [1], V).logprobTokenIds.shape).toEqual([1, V + 1]);
    expect(() => sampleLogprobs("s", 0, [1], V + 1)).toThrow(MockModelError);
    expect(() => promptLogprobs("p", [1, V], 1)).toThrow(/index 32000 is out of bounds/);
    // The first prompt token is never a target.
    expect(promptLogprobs("p", [V, 1], 1).logprobTokenIds.shape).toEqual([1, 2]);
  });
});

function spec(requestId: string, extra: Partial<SchedRequestSpec> = {}): SchedRequestSpec {
  return {
    requestId,
    clientIndex: 0,
    promptTokenIds: [7, 8, 9],
    maxTokens: 4,
    minTokens: 0,
    eosTokenId: null,
    stopTokenIds: [],
    ...extra,
  };
}

function step(scheduler: MockScheduler): Map<string, StepOutput> {
  const result = scheduler.complete(scheduler.schedule());
  return new Map([...result.byClient.values()].flat().map((o) => [o.requestId, o]));
}

describe("MockScheduler logprobs", () => {
  it("gives every logprobs request of a step the batch's max width; prompt logprobs come with the first output", () => {
    const scheduler = new MockScheduler({ maxModelLen: 1000, maxNumSeqs: 8, tokensPerStep: 2 });
    scheduler.add(spec("a", { numLogprobs: 2, numPromptLogprobs: 1, maxTokens: 6 }));
    scheduler.add(spec("b", { numLogprobs: 5, maxTokens: 2 }));
    scheduler.add(spec("c", { numPromptLogprobs: -1, maxTokens: 6 }));
    const a = expectedTokens("a", [7, 8, 9], 6);
    const b = expectedTokens("b", [7, 8, 9], 2);

    const first = step(scheduler);
    expect(first.get("a")!.newLogprobs).toEqual(sampleLogprobs("a", 0, a.slice(0, 2), 5));
    expect(first.get("b")!.newLogprobs).toEqual(sampleLogprobs("b", 0, b, 5));
    expect(first.get("c")!.newLogprobs).toBeUndefined();
    expect(first.get("a")!.newPromptLogprobsTensors).toEqual(promptLogprobs("a", [7, 8, 9], 1));
    expect(first.get("b")!.newPromptLogprobsTensors).toBeUndefined();
    expect(first.get("c")!.newPromptLogprobsTensors).toEqual(promptLogprobs("c", [7, 8, 9], V));
    expect(first.get("c")!.newPromptLogprobsTensors!.logprobs.shape).toEqual([2, V + 1]);
    expect(first.get("b")!.finishReason).toBe(FinishReason.LENGTH);

    // b finished: the next batch's widest request is a itself.
    const second = step(scheduler);
    expect(second.get("a")!.newLogprobs).toEqual(sampleLogprobs("a", 2, a.slice(2, 4), 2));
    expect(second.get("a")!.newPromptLogprobsTensors).toBeUndefined();
    expect(second.get("c")!.newPromptLogprobsTensors).toBeUndefined();
  });

  it("has one row per token kept after the stop check, and 0 top logprobs means the sampled token only", () => {
    const scheduler = new MockScheduler({ maxModelLen: 1000, maxNumSeqs: 8, tokensPerStep: 4 });
    const tokens = expectedTokens("s", [7, 8, 9], 10);
    scheduler.add(spec("s", { numLogprobs: 0, maxTokens: 10, stopTokenIds: [tokens[5]!] }));
    const first = step(scheduler).get("s")!;
    expect(first.newLogprobs).toEqual(sampleLogprobs("s", 0, tokens.slice(0, 4), 0));
    expect(first.newLogprobs!.logprobTokenIds.shape).toEqual([4, 1]);
    const last = step(scheduler).get("s")!;
    expect(last.finishReason).toBe(FinishReason.STOP);
    const kept = tokens.slice(4, tokens.indexOf(tokens[5]!) + 1);
    expect(last.newTokenIds).toEqual(kept);
    expect(last.newLogprobs).toEqual(sampleLogprobs("s", 4, kept, 0));
  });

  it("an aborted request still counts for the width of the step it was scheduled in", () => {
    const scheduler = new MockScheduler({ maxModelLen: 1000, maxNumSeqs: 8, tokensPerStep: 1 });
    scheduler.add(spec("a", { numLogprobs: 1 }));
    scheduler.add(spec("wide", { numLogprobs: 9 }));
    const scheduled = scheduler.schedule();
    scheduler.abort(["wide"]); // arrives during the forward pass
    const out = scheduler.complete(scheduled).byClient.get(0)!;
    expect(out.map((o) => o.requestId)).toEqual(["a"]);
    expect(out[0]!.newLogprobs!.logprobs.shape).toEqual([1, 10]);
  });

  it("throws MockModelError (the engine's fatal path) for k beyond the vocabulary", () => {
    const scheduler = new MockScheduler({ maxModelLen: 1000, maxNumSeqs: 8, tokensPerStep: 1 });
    scheduler.add(spec("huge", { numLogprobs: V + 1 }));
    expect(() => scheduler.complete(scheduler.schedule())).toThrow(MockModelError);
  });
});

function outputsOf(frames: Uint8Array[]): EngineCoreOutput[] {
  return [...decodeEngineCoreOutputs(frames).outputs];
}

describe("encodeOutputs", () => {
  const tokens = [11, 12];
  const small = { sample: sampleLogprobs("e", 0, tokens, 4), prompt: promptLogprobs("e", [1, 2, 3], 1) };

  it("inlines arrays below the threshold as ext 3 in the main frame", () => {
    const frames = encodeOutputs({
      engineIndex: 0,
      timestamp: 1,
      outputs: [
        {
          requestId: "e",
          newTokenIds: tokens,
          finishReason: null,
          stopReason: null,
          newLogprobs: small.sample,
          newPromptLogprobsTensors: small.prompt,
        },
      ],
    });
    expect(frames).toHaveLength(1);
    const [out] = outputsOf(frames);
    expect(out!.newLogprobs).toEqual({ ...small.sample, cuNumGeneratedTokens: null });
    expect(out!.newPromptLogprobsTensors).toEqual({ ...small.prompt, cuNumGeneratedTokens: null });
  });

  it("sends arrays of at least the threshold as aux frames, in encoding order", () => {
    const sample = sampleLogprobs("e", 0, tokens, 40); // [2, 41] * 4 B = 328 B; ranks 16 B stay inline
    const frames = encodeOutputs({
      engineIndex: 0,
      timestamp: 1,
      outputs: [
        { requestId: "e", newTokenIds: tokens, finishReason: null, stopReason: null, newLogprobs: sample },
      ],
    });
    expect(frames.map((f) => f.byteLength).slice(1)).toEqual([328, 328]);
    expect(Buffer.from(frames[1]!)).toEqual(Buffer.from(sample.logprobTokenIds.data.buffer));
    expect(outputsOf(frames)[0]!.newLogprobs).toEqual({ ...sample, cuNumGeneratedTokens: null });
    // Threshold 1: every non-empty array goes out of band (0-byte ones stay inline: 0 < 1).
    const all = encodeOutputs(
      {
        engineIndex: 0,
        timestamp: 1,
        outputs: [
          {
            requestId: "e",
            newTokenIds: tokens,
            finishReason: null,
            stopReason: null,
            newLogprobs: small.sample,
            newPromptLogprobsTensors: promptLogprobs("e", [1], 1),
          },
        ],
      },
      { auxThreshold: 1, vllmVersion: "main", blockSize: 16 },
    );
    expect(all).toHaveLength(4);
  });

  it("reads VLLM_MSGPACK_ZERO_COPY_THRESHOLD like vLLM's int()", () => {
    expect(zeroCopyThreshold({})).toBe(256);
    expect(zeroCopyThreshold({ VLLM_MSGPACK_ZERO_COPY_THRESHOLD: " 64 " })).toBe(64);
    expect(zeroCopyThreshold({ VLLM_MSGPACK_ZERO_COPY_THRESHOLD: "1_024" })).toBe(1024);
    expect(() => zeroCopyThreshold({ VLLM_MSGPACK_ZERO_COPY_THRESHOLD: "0x10" })).toThrow(/invalid literal/);
    expect(() => zeroCopyThreshold({ VLLM_MSGPACK_ZERO_COPY_THRESHOLD: "" })).toThrow(/invalid literal/);
  });
});

// ---- real sockets: what a zeromq PULL hands over are Node Buffers ---------------------------------------

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  // The frontend's ipc:// files outlive its sockets; leave nothing behind in the temp directory.
  for (const address of frontend
    ? [frontend.handshakeAddress, ...frontend.inputAddresses, ...frontend.outputAddresses]
    : []) {
    if (address.startsWith("ipc://")) rmSync(address.slice("ipc://".length), { force: true });
  }
  engine = undefined;
  frontend = undefined;
});

async function setup(options: Partial<MockEngineOptions> = {}) {
  frontend = await RawFrontend.create();
  engine = await startMockEngine({ stepMs: 2, ...options, handshakeAddress: frontend.handshakeAddress });
  await frontend.connect([0]);
  return frontend;
}

interface Asked {
  id: string;
  prompt: number[];
  maxTokens: number;
  logprobs?: number;
  promptLogprobs?: number;
}

function messagesWith(fe: RawFrontend, id: string): Extract<Received, { kind: "outputs" }>[] {
  return fe.received.items.filter(
    (m): m is Extract<Received, { kind: "outputs" }> =>
      m.kind === "outputs" && m.outputs.outputs.some((o) => o.requestId === id),
  );
}

/** Every value of every output of `ask` against the model; `width` = the step's top-logprob count. */
function checkAgainstModel(fe: RawFrontend, ask: Asked, width: (output: EngineCoreOutput) => number): void {
  const outputs = fe.outputsFor(ask.id).map((o) => o.output);
  const tokens = outputs.flatMap((o) => o.newTokenIds);
  expect(tokens).toEqual(expectedTokens(ask.id, ask.prompt, ask.maxTokens));
  let position = 0;
  outputs.forEach((output, i) => {
    if (ask.logprobs === undefined) {
      expect(output.newLogprobs).toBeNull();
    } else {
      const expected = sampleLogprobs(ask.id, position, output.newTokenIds, width(output));
      expect(output.newLogprobs).toEqual({ ...expected, cuNumGeneratedTokens: null });
    }
    if (ask.promptLogprobs !== undefined && i === 0) {
      const expected = promptLogprobs(ask.id, ask.prompt, resolveNumLogprobs(ask.promptLogprobs));
      expect(output.newPromptLogprobsTensors).toEqual({ ...expected, cuNumGeneratedTokens: null });
    } else {
      expect(output.newPromptLogprobsTensors).toBeNull();
    }
    position += output.newTokenIds.length;
  });
}

function add(fe: RawFrontend, ask: Asked): Promise<void> {
  return fe.add(
    0,
    request(
      ask.id,
      {
        maxTokens: ask.maxTokens,
        ...(ask.logprobs !== undefined ? { logprobs: ask.logprobs } : {}),
        ...(ask.promptLogprobs !== undefined ? { promptLogprobs: ask.promptLogprobs } : {}),
      },
      { promptTokenIds: ask.prompt },
    ),
  );
}

describe("logprobs over real sockets", () => {
  it("few logprobs travel inline (one frame per message) and decode exactly from the received Buffers", async () => {
    const fe = await setup();
    const ask: Asked = {
      id: "inline",
      prompt: [3, 1, 4, 1, 5],
      maxTokens: 6,
      logprobs: 3,
      promptLogprobs: 2,
    };
    await add(fe, ask);
    await fe.finished(ask.id);
    const messages = messagesWith(fe, ask.id);
    expect(messages).toHaveLength(6);
    for (const m of messages) {
      expect(m.frames).toHaveLength(1);
      expect(Buffer.isBuffer(m.frames[0])).toBe(true);
    }
    checkAgainstModel(fe, ask, () => 3);
  });

  it("many logprobs and long prompts travel as aux frames; -1 is the whole vocabulary", async () => {
    const fe = await setup();
    const vocab: Asked = {
      id: "vocab",
      prompt: [9, 8, 7, 6, 5, 4],
      maxTokens: 3,
      logprobs: 100,
      promptLogprobs: -1,
    };
    await add(fe, vocab);
    await fe.finished(vocab.id);
    const messages = messagesWith(fe, vocab.id);
    // Sample ids and logprobs ([1, 101] * 4 B) and prompt ids and logprobs ([5, 32001] * 4 B) go out of
    // band, in encoding order; the ranks (8 B and 20 B) stay inline.
    const promptBytes = 5 * (V + 1) * 4;
    expect(messages[0]!.frames.map((f) => f.byteLength).slice(1)).toEqual([
      404,
      404,
      promptBytes,
      promptBytes,
    ]);
    for (const m of messages.slice(1)) expect(m.frames.map((f) => f.byteLength).slice(1)).toEqual([404, 404]);
    checkAgainstModel(fe, vocab, () => 100);

    const long: Asked = {
      id: "long-prompt",
      prompt: Array.from({ length: 40 }, (_, i) => (i * 977) % V),
      maxTokens: 2,
      logprobs: -1,
      promptLogprobs: 10,
    };
    await add(fe, long);
    await fe.finished(long.id);
    const [first] = messagesWith(fe, long.id);
    const sampleBytes = (V + 1) * 4;
    expect(first!.frames.map((f) => f.byteLength).slice(1)).toEqual([
      sampleBytes,
      sampleBytes,
      39 * 11 * 4,
      39 * 11 * 4,
    ]);
    checkAgainstModel(fe, long, () => V);
  });

  it("concurrent requests share the batch's widest logprobs (VLLM_MSGPACK_ZERO_COPY_THRESHOLD honoured)", async () => {
    const fe = await setup({ stepMs: 20, env: { VLLM_MSGPACK_ZERO_COPY_THRESHOLD: "64" } });
    const asks: Asked[] = [
      { id: "narrow", prompt: [1, 2, 3], maxTokens: 4, logprobs: 1 },
      { id: "wide", prompt: [1, 2, 3], maxTokens: 2, logprobs: 20, promptLogprobs: 0 },
      { id: "none", prompt: [1, 2, 3], maxTokens: 4 },
    ];
    await Promise.all(asks.map((ask) => add(fe, ask)));
    for (const ask of asks) await fe.finished(ask.id);
    const wideDone = fe.outputsFor("wide").map((o) => o.message.timestamp);
    // While "wide" runs, "narrow" gets 20 columns; after it finished, its own 1.
    const widthOf = (output: EngineCoreOutput) => (output.newLogprobs!.logprobs.shape[1] ?? 0) - 1;
    const narrowWidths = fe.outputsFor("narrow").map(({ message, output }) => ({
      shared: wideDone.includes(message.timestamp),
      width: widthOf(output),
    }));
    expect(narrowWidths.some((w) => w.shared)).toBe(true);
    for (const w of narrowWidths) expect(w.width).toBe(w.shared ? 20 : 1);
    for (const ask of asks) checkAgainstModel(fe, ask, widthOf);
    // 84 B ([1, 21] * 4) ≥ 64: aux; 8 B ranks inline.
    const firstWide = messagesWith(fe, "wide")[0]!;
    expect(firstWide.frames.length).toBeGreaterThan(1);
  });

  it("k beyond the vocabulary is fatal in the step, as torch.topk raising in the model runner", async () => {
    const fe = await setup();
    await add(fe, { id: "too-many", prompt: [1, 2], maxTokens: 3, logprobs: V + 1 });
    await fe.received.wait((m) => m.kind === "dead", 10_000, "ENGINE_CORE_DEAD");
    const fault = await engine!.waitForEvent((e) => e.event === "fault" && e.kind === "engine-dead");
    expect(fault.detail).toBe("selected index k out of range");
    expect(fe.outputsFor("too-many")).toEqual([]);
  });
});
