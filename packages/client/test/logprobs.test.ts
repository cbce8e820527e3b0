// Sample and prompt logprobs end to end: the mock engine (a real child process) sends them as vLLM does,
// over real ZeroMQ sockets, and every value reaching the caller through EngineCoreClient is checked
// against the engine's deterministic rule (token ids, logprobs, ranks, shapes, dtypes).
//
// Every test runs requests on two threads at once (a worker attached with `EngineCoreClient.attach`),
// so engine steps carry outputs for requests of both: the runtime then decodes the received zeromq
// Buffers itself and posts the decoded objects (packages/runtime/src/runtime-thread/connection.ts), the path
// that delivered garbage for unaligned inline tensors before 416f819. Steps that concern one thread only
// take the forwarded-frames path.
import { Worker } from "node:worker_threads";
import {
  expectedTokens,
  MOCK_VOCAB_SIZE,
  type MockPromptLogprobs,
  type MockSampleLogprobs,
  promptLogprobs,
  resolveNumLogprobs,
  sampleLogprobs,
} from "@vllm-engine-core/mock-engine";
import type { LogprobsLists, LogprobsTensors, Tensor } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { CallRequest, EngineCoreClient, EngineCoreOutput } from "../src/index.js";
import { connectToMockEngine, fixture, type Harness } from "./helpers.js";

const V = MOCK_VOCAB_SIZE;
/** Far more steps than the main thread's requests need; the test stops these streams itself. */
const OPEN_MAX_TOKENS = 4000;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

interface Ask {
  id: string;
  prompt: number[];
  /** "open": the request runs until the main thread's requests are done (worker requests only). */
  maxTokens: number | "open";
  logprobs?: number;
  promptLogprobs?: number;
}

interface Seen {
  requestId: string;
  outputs: EngineCoreOutput[];
  /** `EngineCoreOutputs.timestamp` of the message behind each output. */
  stamps: number[];
}

function callRequest(ask: Ask): CallRequest {
  return {
    requestId: ask.id,
    promptTokenIds: ask.prompt,
    samplingParams: {
      maxTokens: ask.maxTokens === "open" ? OPEN_MAX_TOKENS : ask.maxTokens,
      ...(ask.logprobs !== undefined ? { logprobs: ask.logprobs } : {}),
      ...(ask.promptLogprobs !== undefined ? { promptLogprobs: ask.promptLogprobs } : {}),
    },
  };
}

async function consume(client: EngineCoreClient, ask: Ask): Promise<Seen> {
  const stream = await client.call(callRequest(ask));
  const seen: Seen = { requestId: ask.id, outputs: [], stamps: [] };
  for await (const output of stream) {
    seen.outputs.push(output);
    seen.stamps.push(stream.lastTimestamp);
  }
  return seen;
}

/**
 * Starts `onWorker` on a worker thread attached to the connection; once the first of them produced an
 * output, starts `onMain` here; when those are done, stops the worker's "open" requests.
 */
async function runOnTwoThreads(
  client: EngineCoreClient,
  onMain: Ask[],
  onWorker: Ask[],
): Promise<{ main: Seen[]; worker: Seen[] }> {
  const worker = new Worker(fixture("logprobs-worker.mjs"), {
    workerData: {
      handle: client.handle,
      requests: onWorker.map((ask) => ({ request: callRequest(ask), open: ask.maxTokens === "open" })),
    },
    execArgv: [], // plain Node resolution (built dist), not the test runner's source condition
  });
  const exited = new Promise((resolve) => worker.once("exit", resolve));
  const next = () =>
    new Promise<{ type: string; results?: Seen[]; message?: string }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
  try {
    const started = await next();
    if (started.type !== "started") throw new Error(`worker: ${started.message ?? started.type}`);
    const done = next();
    const main = await Promise.all(onMain.map((ask) => consume(client, ask)));
    worker.postMessage("stop");
    const report = await done;
    if (report.type !== "done") throw new Error(`worker: ${report.message ?? report.type}`);
    return { main, worker: report.results! };
  } finally {
    await worker.terminate();
    await exited;
  }
}

function bytesOf(data: Tensor["data"]): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** dtype, shape, element type and every element (bitwise: a byte compare, fast on whole-vocabulary rows). */
function expectSameTensor(actual: Tensor, expected: Tensor, where: string): void {
  const describe = (t: Tensor) => ({ dtype: t.dtype, shape: t.shape, type: t.data.constructor.name });
  expect(describe(actual), where).toEqual(describe(expected));
  if (bytesOf(actual.data).equals(bytesOf(expected.data))) return;
  const i = actual.data.findIndex((v: number | bigint, k: number) => v !== expected.data[k]);
  expect.fail(`${where}: element ${i} is ${actual.data[i]}, the engine sent ${expected.data[i]}`);
}

function expectSameLogprobs(
  actual: LogprobsLists | LogprobsTensors | null,
  expected: MockSampleLogprobs | MockPromptLogprobs,
  where: string,
): void {
  expect(actual, where).not.toBeNull();
  const a = actual as unknown as Record<string, unknown>;
  const e = expected as unknown as Record<string, Tensor>;
  expect(Object.keys(a).sort(), where).toEqual([...Object.keys(e), "cuNumGeneratedTokens"].sort());
  for (const key of Object.keys(e)) expectSameTensor(a[key] as Tensor, e[key]!, `${where} ${key}`);
  expect(a.cuNumGeneratedTokens, where).toBeNull();
}

/** Checks every value the caller received for `ask` against the mock engine's rule. */
function checkRequest(ask: Ask, seen: Seen, batchWidths: readonly number[]): void {
  const tokens = seen.outputs.flatMap((o) => o.newTokenIds);
  if (ask.maxTokens === "open") expect(tokens.length).toBeGreaterThan(0);
  const count = ask.maxTokens === "open" ? tokens.length : ask.maxTokens;
  expect(tokens).toEqual(expectedTokens(ask.id, ask.prompt, count));
  let position = 0;
  seen.outputs.forEach((output, i) => {
    const where = `${ask.id} output ${i}`;
    if (ask.logprobs === undefined) {
      expect(output.newLogprobs, where).toBeNull();
    } else {
      const lists = output.newLogprobs;
      expect(lists, where).not.toBeNull();
      // The sampler gathers the batch's max_num_logprobs for everybody: one of the Ks asked for, >= ours.
      const width = lists!.logprobs.shape[1]! - 1;
      expect(
        batchWidths.filter((k) => k >= resolveNumLogprobs(ask.logprobs!)),
        where,
      ).toContain(width);
      expectSameLogprobs(lists, sampleLogprobs(ask.id, position, output.newTokenIds, width), where);
    }
    if (ask.promptLogprobs !== undefined && i === 0) {
      const expected = promptLogprobs(ask.id, ask.prompt, resolveNumLogprobs(ask.promptLogprobs));
      expectSameLogprobs(output.newPromptLogprobsTensors, expected, where);
    } else {
      expect(output.newPromptLogprobsTensors, where).toBeNull();
    }
    position += output.newTokenIds.length;
  });
}

async function runAndCheck(onMain: Ask[], onWorker: Ask[]): Promise<void> {
  harness = await connectToMockEngine({ stepMs: 5 });
  const { main, worker } = await runOnTwoThreads(harness.client, onMain, onWorker);
  const asks = [...onMain, ...onWorker];
  const widths = asks.filter((a) => a.logprobs !== undefined).map((a) => resolveNumLogprobs(a.logprobs!));
  const seen = new Map([...main, ...worker].map((s) => [s.requestId, s]));
  for (const ask of asks) checkRequest(ask, seen.get(ask.id)!, widths);
  // Some engine step carried outputs for both threads (so the runtime split a decoded message).
  const workerStamps = new Set(worker.flatMap((s) => s.stamps));
  expect(main.some((s) => s.stamps.some((t) => workerStamps.has(t)))).toBe(true);
}

describe("logprobs through EngineCoreClient", () => {
  it("few logprobs (ext 3 inline at unaligned offsets of the main frame) arrive exactly as sent", async () => {
    await runAndCheck(
      [
        { id: "inline-a", prompt: [3, 1, 4, 1, 5], maxTokens: 6, logprobs: 1, promptLogprobs: 2 },
        { id: "inline-b", prompt: [2, 7], maxTokens: 5, logprobs: 0, promptLogprobs: 0 },
      ],
      [{ id: "inline-w", prompt: [9, 9, 8], maxTokens: "open", logprobs: 3, promptLogprobs: 1 }],
    );
  });

  it("many logprobs, long prompts and the whole vocabulary (aux frames) arrive exactly as sent", async () => {
    await runAndCheck(
      [
        // [1, 81] * 4 B sample arrays and [5, 32001] * 4 B prompt arrays: aux frames; ranks inline.
        { id: "aux-big", prompt: [6, 5, 4, 3, 2, 1], maxTokens: 4, logprobs: 80, promptLogprobs: -1 },
        {
          id: "aux-long",
          prompt: Array.from({ length: 40 }, (_, i) => (i * 131) % V),
          maxTokens: 4,
          promptLogprobs: 20,
        },
        // -1 widens every logprobs request of the steps it runs in to the whole vocabulary.
        { id: "aux-vocab", prompt: [1, 2], maxTokens: 2, logprobs: -1 },
      ],
      [{ id: "aux-w", prompt: [4, 4, 4, 4], maxTokens: "open", logprobs: 100, promptLogprobs: 70 }],
    );
  });

  it("several concurrent requests on two threads, with and without logprobs, each get their own", async () => {
    await runAndCheck(
      [
        { id: "mix-none", prompt: [1, 2, 3], maxTokens: 7 },
        { id: "mix-k0", prompt: [1, 2, 3], maxTokens: 5, logprobs: 0 },
        { id: "mix-k2", prompt: [5, 6], maxTokens: 6, logprobs: 2, promptLogprobs: 3 },
        { id: "mix-k7", prompt: [8, 9, 10, 11], maxTokens: 3, logprobs: 7 },
        { id: "mix-p-only", prompt: [12, 13, 14, 15, 16], maxTokens: 4, promptLogprobs: 70 },
      ],
      [
        { id: "mix-w-none", prompt: [1], maxTokens: "open" },
        { id: "mix-w-k4", prompt: [2, 3], maxTokens: "open", logprobs: 4, promptLogprobs: 0 },
        { id: "mix-w-k90", prompt: [4, 5, 6], maxTokens: 20, logprobs: 90 },
      ],
    );
  });
});
