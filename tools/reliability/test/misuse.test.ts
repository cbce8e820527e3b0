import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
// Priority 3: caller misuse. Every misuse gets a typed error (stable name and code) and nothing reaches the
// engine for it: the mock engine's event log must show no ADD (and no ABORT) that the caller did not mean.
import {
  ClientClosedError,
  ConcurrentReadError,
  DuplicateRequestIdError,
  EngineCoreClient,
  FinishReason,
  InvalidDataParallelRankError,
  InvalidRequestError,
} from "@vllm-engine-core/client";
import { type MockEngineProcess, reservedTcpPorts } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatRequest,
  connectEngines,
  drain,
  ipcAddress,
  removeIpcFiles,
  type Setup,
  sleep,
  startEngines,
  stopAll,
  track,
  withTimeout,
} from "../src/harness.ts";

let setup: Setup | undefined;
let extraEngines: MockEngineProcess[] = [];
afterEach(async () => {
  await setup?.close();
  setup = undefined;
  await stopAll(extraEngines);
  extraEngines = [];
  removeIpcFiles();
});

const adds = (engine: MockEngineProcess) =>
  engine.events.filter((e) => e.event === "add").map((e) => e.requestId);
const aborts = (engine: MockEngineProcess) =>
  engine.events.filter((e) => e.event === "abort").map((e) => e.requestIds);

/** Settles `promise` and returns the rejection (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  const result = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (result.ok) throw new Error(`expected a rejection, got ${String(result.value)}`);
  return result.error as Error & { code?: string };
}

describe("caller misuse", () => {
  it("invalid requests → InvalidRequestError naming the field; the engine never sees an ADD", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 2 }]);
    const { client, engines } = setup;
    const base = chatRequest("bad", 4);
    const cases: { what: string; request: unknown; field: RegExp }[] = [
      { what: "empty prompt", request: { ...base, promptTokenIds: [] }, field: /^promptTokenIds$/ },
      {
        what: "fractional token id",
        request: { ...base, promptTokenIds: [1, 2.5] },
        field: /^promptTokenIds\[1\]$/,
      },
      {
        what: "token id beyond uint64",
        request: { ...base, promptTokenIds: [2n ** 64n] },
        field: /^promptTokenIds\[0\]$/,
      },
      {
        what: "token id beyond 2^53 as a number",
        request: { ...base, promptTokenIds: [2 ** 53] },
        field: /^promptTokenIds\[0\]$/,
      },
      {
        what: "string token id",
        request: { ...base, promptTokenIds: ["7"] },
        field: /^promptTokenIds\[0\]$/,
      },
      {
        what: "NaN token id",
        request: { ...base, promptTokenIds: [Number.NaN] },
        field: /^promptTokenIds\[0\]$/,
      },
      {
        what: "prompt not an array",
        request: { ...base, promptTokenIds: "1 2 3" },
        field: /^promptTokenIds$/,
      },
      {
        what: "maxTokens 0",
        request: { ...base, samplingParams: { maxTokens: 0 } },
        field: /^samplingParams\.maxTokens$/,
      },
      {
        what: "maxTokens -5",
        request: { ...base, samplingParams: { maxTokens: -5 } },
        field: /^samplingParams\.maxTokens$/,
      },
      {
        what: "maxTokens 1.5",
        request: { ...base, samplingParams: { maxTokens: 1.5 } },
        field: /^samplingParams\.maxTokens$/,
      },
      {
        what: "maxTokens null",
        request: { ...base, samplingParams: { maxTokens: null } },
        field: /^samplingParams\.maxTokens$/,
      },
      {
        what: "NaN temperature",
        request: { ...base, samplingParams: { maxTokens: 4, temperature: Number.NaN } },
        field: /^samplingParams\.temperature$/,
      },
      {
        what: "infinite temperature",
        request: { ...base, samplingParams: { maxTokens: 4, temperature: Number.POSITIVE_INFINITY } },
        field: /^samplingParams\.temperature$/,
      },
      {
        what: "negative temperature",
        request: { ...base, samplingParams: { maxTokens: 4, temperature: -0.1 } },
        field: /^samplingParams\.temperature$/,
      },
      {
        what: "prompt longer than maxModelLen",
        request: { ...base, promptTokenIds: new Array(client.maxModelLen + 1).fill(7) },
        field: /^promptTokenIds$/,
      },
      {
        what: "temperature above 2",
        request: { ...base, samplingParams: { maxTokens: 4, temperature: 2.5 } },
        field: /^samplingParams\.temperature$/,
      },
      { what: "numeric request id", request: { ...base, requestId: 42 }, field: /^requestId$/ },
      {
        what: "no sampling or pooling params",
        request: { ...base, samplingParams: undefined },
        field: /Params/,
      },
      { what: "not an object", request: null, field: /^request$/ },
    ];
    for (const { what, request, field } of cases) {
      const error = await rejection(client.call(request as never));
      expect(error, what).toBeInstanceOf(InvalidRequestError);
      expect(error.name, what).toBe("InvalidRequestError");
      expect(error.code, what).toBe("INVALID_REQUEST");
      expect((error as InvalidRequestError).field, what).toMatch(field);
      expect(error.message, what).toMatch(/is invalid at .*Fix that field and resubmit\.$/);
    }
    // A generation prompt of exactly maxModelLen tokens is refused, as vLLM's frontend refuses it (the
    // engine would never schedule its last token); one token shorter is fine.
    const full = await rejection(
      client.call({ ...chatRequest("at-limit", 1), promptTokenIds: new Array(client.maxModelLen!).fill(7) }),
    );
    expect(full).toBeInstanceOf(InvalidRequestError);
    expect(full.message).toMatch(/is longer than the maximum model length of/);
    const belowLimit = await track(client, {
      ...chatRequest("below-limit", 1),
      promptTokenIds: new Array(client.maxModelLen! - 1).fill(7),
    });
    expect((await belowLimit.outcome).error).toBeUndefined();
    expect(adds(engines[0]!)).toEqual(["below-limit"]);
    expect(client.isHealthy).toBe(true);
  });

  it("unknown dataParallelRank → InvalidDataParallelRankError, nothing sent", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 2 }]);
    const { client, engines } = setup;
    const error = await rejection(client.call({ ...chatRequest("rank-7", 2), dataParallelRank: 7 }));
    expect(error).toBeInstanceOf(InvalidDataParallelRankError);
    expect(error.code).toBe("INVALID_DATA_PARALLEL_RANK");
    expect((error as InvalidDataParallelRankError).engineIndices).toEqual([0]);
    // The failed submit was rolled back: the same id is usable at once.
    const ok = await track(client, { ...chatRequest("rank-7", 2), dataParallelRank: 0 });
    expect((await ok.outcome).tokens).toHaveLength(2);
    expect(adds(engines[0]!)).toEqual(["rank-7"]);
  });

  it("duplicate live id → DuplicateRequestIdError (also when both calls race); one ADD only", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5 }]);
    const { client, engines } = setup;
    const first = await track(client, chatRequest("dup", 30));
    const error = await rejection(client.call(chatRequest("dup", 30)));
    expect(error).toBeInstanceOf(DuplicateRequestIdError);
    expect(error.code).toBe("DUPLICATE_REQUEST_ID");
    expect((error as DuplicateRequestIdError).requestId).toBe("dup");
    // The first stream is intact.
    const firstOutcome = await first.outcome;
    expect(firstOutcome.error).toBeUndefined();
    expect(firstOutcome.tokens).toHaveLength(30);

    // Two calls with one id in the same tick: exactly one wins.
    const raced = await Promise.allSettled([
      client.call(chatRequest("race", 5)),
      client.call(chatRequest("race", 5)),
    ]);
    const won = raced.filter((r) => r.status === "fulfilled");
    const lost = raced.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(DuplicateRequestIdError);
    const wonOutcome = await drain("race", (won[0] as PromiseFulfilledResult<AsyncIterable<never>>).value);
    expect(wonOutcome.tokens).toHaveLength(5);
    expect(adds(engines[0]!)).toEqual(["dup", "race"]);
  });

  it("after a rejected duplicate, abort() of the id still ends the first stream (ABORT output)", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5 }]);
    const { client, engines } = setup;
    const first = await track(client, chatRequest("dup-abort", 1_000_000));
    await first.firstOutput;
    await expect(client.call(chatRequest("dup-abort", 5))).rejects.toBeInstanceOf(DuplicateRequestIdError);
    await client.abort("dup-abort");
    const outcome = await withTimeout(first.outcome, 5_000, "the first stream to end after abort()");
    expect(outcome.error).toBeUndefined();
    expect(outcome.finishReason).toBe(FinishReason.ABORT);
    await engines[0]!.waitForEvent((e) => e.event === "abort" && (e.requestIds ?? []).includes("dup-abort"));
  });

  it("abort of unknown, finished and empty id lists: no error, no ABORT on the wire", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 2 }]);
    const { client, engines } = setup;
    const done = await track(client, chatRequest("finished-already", 2));
    expect((await done.outcome).finishReason).toBe(FinishReason.LENGTH);
    await client.abort([]);
    await client.abort("never-existed");
    await client.abort(["never-existed", "finished-already", "never-existed"]);
    // A live request aborted twice: the second abort is a no-op too.
    const live = await track(client, chatRequest("live", 1_000_000));
    await live.firstOutput;
    await client.abort("live");
    await client.abort("live");
    expect((await live.outcome).finishReason).toBe(FinishReason.ABORT);
    await engines[0]!.waitForEvent((e) => e.event === "abort");
    await sleep(200);
    expect(aborts(engines[0]!)).toEqual([["live"]]);
  });

  it("a second next() while one is pending → typed error; the pending read and the stream are unaffected", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5 }]);
    const { client } = setup;
    const stream = await client.call(chatRequest("reader", 5));
    const first = stream.next();
    const error = await rejection(stream.next());
    expect(error).toBeInstanceOf(ConcurrentReadError);
    expect(error.code).toBe("CONCURRENT_READ");
    expect(error.message).toContain('"reader"');
    const firstResult = await first;
    expect(firstResult.done).toBe(false);
    const rest = await drain("reader", stream);
    expect(rest.error).toBeUndefined();
    expect(firstResult.value!.newTokenIds.length + rest.tokens.length).toBe(5);
  });

  it("calls after shutdown → ClientClosedError; shutdown twice is harmless; nothing reaches the engine", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5 }]);
    const { client, engines } = setup;
    const open = await track(client, chatRequest("open", 1_000_000));
    await open.firstOutput;
    await client.shutdown();
    await client.shutdown();
    const openOutcome = await open.outcome;
    expect(openOutcome.error).toBeInstanceOf(ClientClosedError);
    for (const late of [
      client.call(chatRequest("late", 2)),
      client.abort("open"),
      client.callUtility("echo", [1]),
      client.isSleeping(),
    ]) {
      const error = await rejection(late);
      expect(error).toBeInstanceOf(ClientClosedError);
      expect(error.code).toBe("CLIENT_CLOSED");
    }
    await client.detach(); // also harmless after shutdown
    // The health error after shutdown is the ClientClosedError (documented: the first error wins).
    expect(client.healthError).toBeInstanceOf(ClientClosedError);
    await sleep(200);
    expect(adds(engines[0]!)).toEqual(["open"]);
    expect(engines[0]!.events.filter((e) => e.event === "utility")).toEqual([]);
  });

  it("concurrent shutdown calls all wait until the sockets are closed (the ports can be bound again)", async () => {
    // Both shutdown() promises must mean "closed": a caller awaiting the second one re-binds the same
    // fixed TCP input/output ports right away (a second engine already waits on another handshake address).
    const [inputPort, outputPort] = await reservedTcpPorts(2);
    const local = {
      localInputAddress: `tcp://127.0.0.1:${inputPort}`,
      localOutputAddress: `tcp://127.0.0.1:${outputPort}`,
    };
    const hs1 = ipcAddress("hs1");
    const hs2 = ipcAddress("hs2");
    extraEngines = [
      ...(await startEngines(hs1, [{ engineIndices: [0] }])),
      ...(await startEngines(hs2, [{ engineIndices: [0] }])),
    ];
    const transport = { mode: "handshake-owner" as const, readyTimeoutMs: 20_000, ...local };
    const first = await EngineCoreClient.connect({ transport: { ...transport, handshakeAddress: hs1 } });
    await (await track(first, chatRequest("one", 2))).outcome;
    // The first engine must be gone before the ports are reused: a live engine's DEALER and PUSH reconnect
    // by themselves to whatever binds those ports next, and its DEALER (same identity 0) would then shadow
    // the second engine's registration.
    extraEngines[0]!.kill("SIGKILL");
    await extraEngines[0]!.exited;
    const pending = first.shutdown();
    await first.shutdown();
    const again = await EngineCoreClient.connect({ transport: { ...transport, handshakeAddress: hs2 } });
    try {
      expect(again.inputAddress).toBe(local.localInputAddress);
      expect((await (await track(again, chatRequest("two", 2))).outcome).tokens).toHaveLength(2);
    } finally {
      await pending;
      await again.shutdown();
    }
  });
});

describe("caller misuse, whole process", () => {
  it("uncloneable arguments, bad handles, empty utility names, clientIndex ≠ 0 with handshake-owner: typed errors, nothing pending, clean exit", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/unclonable-args.mjs", import.meta.url));
    const child = spawn(process.execPath, [fixture, ipcAddress("unclonable")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once("exit", (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(JSON.parse(stdout.trim())).toEqual({
      errors: [
        "InvalidRequestError:INVALID_REQUEST:args",
        "InvalidRequestError:INVALID_REQUEST:args",
        "InvalidRequestError:INVALID_REQUEST:requestIds[0]",
        "InvalidRequestError:INVALID_REQUEST:method",
        "InvalidConnectionHandleError:INVALID_CONNECTION_HANDLE:",
        "InvalidConnectionHandleError:INVALID_CONNECTION_HANDLE:",
        "InvalidConfigError:INVALID_CONFIG:clientIndex",
      ],
      tokens: 3,
    });
  });
});
