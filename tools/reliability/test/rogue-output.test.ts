// Output-path robustness against a rogue engine (a raw ZeroMQ peer in a child process, src/rogue-engine.ts):
// each injected message arrives mid-stream while 4 requests run. For every injection here the runtime keeps
// running, the live streams complete with exactly the expected tokens, the health stays clean, a utility
// call and a fresh request still work, and nothing escapes as an uncaught exception.
//
// How each one is reported (asserted below: `client.diagnostics()` counters, and what the runtime prints on
// this process's stderr). None changes the health or fails a stream: each decodes, and names no live request.
// - counted as an unknown utility reply, with a warning ([VLLM_UNKNOWN_UTILITY_REPLY], rate-limited): a utility
//   reply for a call id nobody made.
// - counted as a stray output, with a warning ([VLLM_STRAY_OUTPUT], rate-limited): tokens for a request id
//   never sent (`outputsForUnknownRequests`), a second finish of a finished request (`outputsAfterFinish`).
// - counted, no warning: tokens for a request the client aborted (`outputsAfterAbort`; the engine may have
//   had them in flight, vLLM drops them too) — the last test below.
// - accepted: 3 frames where no aux is referenced (unused aux frames are ignored, as vLLM's decoder does).
// The exact table is EXPECTED below. Undecodable injections (garbage, a 2-frame message starting with the
// ENGINE_CORE_DEAD sentinel, an aux index out of range, a bad field, a mixed shape) fail the streams, the
// call or the engine they concern: protocol-errors.test.ts.
import { type ConnectionDiagnostics, EngineCoreClient } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { drain, ipcAddress, removeIpcFiles, withTimeout } from "../src/harness.ts";
import { type RogueEngine, startRogueEngine } from "../src/rogue-engine.ts";
import type { InjectionKind } from "../src/rogue-protocol.ts";
import { captureStderr, type StderrCapture } from "../src/stderr-capture.ts";

/** What each injection adds to `diagnostics()`; every counted anomaly also logs one warning line. */
interface Counted {
  undecodable: number;
  afterAbort: number;
  afterFinish: number;
  unknownRequest: number;
  unknownUtility: number;
}
const NONE: Counted = { undecodable: 0, afterAbort: 0, afterFinish: 0, unknownRequest: 0, unknownUtility: 0 };
const EXPECTED: Partial<Record<InjectionKind, Counted>> = {
  // decoded; the unreferenced aux frames are ignored (as vLLM's msgpack decoder does)
  "extra-frames": NONE,
  "unknown-request": { ...NONE, unknownRequest: 1 },
  "second-finish": { ...NONE, afterFinish: 1 },
  "unknown-utility": { ...NONE, unknownUtility: 1 },
};

function counted(d: ConnectionDiagnostics): Counted {
  return {
    undecodable: d.undecodableOutputMessages,
    afterAbort: d.outputsAfterAbort,
    afterFinish: d.outputsAfterFinish,
    unknownRequest: d.outputsForUnknownRequests,
    unknownUtility: d.unknownUtilityReplies,
  };
}

let uncaught: string[] = [];
const onUncaught = (e: unknown) => uncaught.push(String((e as Error)?.stack ?? e));
let stderr: StderrCapture;
let engine: RogueEngine | undefined;
let client: EngineCoreClient | undefined;
let healthChanges: string[] = [];

beforeEach(() => {
  uncaught = [];
  healthChanges = [];
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
  stderr = captureStderr({ echo: false });
});

afterEach(async () => {
  await client?.shutdown();
  await engine?.stop();
  client = undefined;
  engine = undefined;
  removeIpcFiles();
  stderr.restore();
  process.off("uncaughtException", onUncaught);
  process.off("unhandledRejection", onUncaught);
});

async function connect(): Promise<EngineCoreClient> {
  const handshakeAddress = ipcAddress("rogue");
  engine = startRogueEngine({ handshakeAddress, stepMs: 5 });
  client = await EngineCoreClient.connect({
    transport: { mode: "handshake-owner", handshakeAddress, engineCount: 1, readyTimeoutMs: 20_000 },
  });
  client.onHealthChange((e) => healthChanges.push(`${e.name}: ${e.message}`));
  return client;
}

const prompt = (id: string) => [1, 2, id.length];

async function run(c: EngineCoreClient, requestId: string, maxTokens: number) {
  const stream = await c.call({
    requestId,
    promptTokenIds: prompt(requestId),
    samplingParams: { maxTokens },
  });
  return drain(requestId, stream);
}

async function scenario(kind: InjectionKind) {
  const c = await connect();
  // A request that has finished before the injection (target of "second-finish").
  const done = await run(c, "done-early", 3);
  expect(done.error).toBeUndefined();
  const live = ["live-a", "live-b", "live-c", "live-d"];
  const outcomes = live.map((id) => run(c, id, 60));
  await new Promise((resolve) => setTimeout(resolve, 60)); // mid-stream (60 tokens at 5 ms/step)
  const targets: Partial<Record<InjectionKind, { requestId?: string; callId?: number }>> = {
    "unknown-request": { requestId: "never-submitted" },
    "second-finish": { requestId: "done-early" },
    "unknown-utility": { callId: 987_654 },
  };
  const injected = await engine!.inject(kind, targets[kind]);
  const results = await withTimeout(Promise.all(outcomes), 20_000, "live streams");
  for (const r of results) {
    expect({ id: r.requestId, error: r.error?.message, fin: r.finalOutputs, after: r.afterFinal }).toEqual({
      id: r.requestId,
      error: undefined,
      fin: 1,
      after: 0,
    });
    expect(r.tokens, r.requestId).toEqual(expectedTokens(r.requestId, prompt(r.requestId), 60));
  }
  // A utility call (pending-call map not confused) and a fresh request still work.
  expect(await c.resetPrefixCache()).toBe(true);
  const fresh = await run(c, "fresh", 10);
  expect(fresh.tokens).toEqual(expectedTokens("fresh", prompt("fresh"), 10));
  await new Promise((resolve) => setTimeout(resolve, 100)); // late warnings reach stderr
  return { injected, healthy: c.isHealthy, diagnostics: await c.diagnostics() };
}

describe("rogue engine: bad output traffic", () => {
  for (const kind of Object.keys(EXPECTED) as InjectionKind[]) {
    const expected = EXPECTED[kind]!;
    const how = expected === NONE ? "accepted" : "counted + warning";
    it(`${kind} (${how}): runtime keeps running, live streams complete, health clean`, async () => {
      const { injected, healthy, diagnostics } = await scenario(kind);
      console.log(
        `[reliability] rogue ${kind}: ${injected.frames} frame(s), diagnostics ${JSON.stringify(counted(diagnostics))}\n${stderr.text()}`,
      );
      expect(healthy).toBe(true);
      expect(healthChanges).toEqual([]);
      expect(uncaught).toEqual([]);
      expect(counted(diagnostics)).toEqual(expected);
      expect(stderr.droppedWarnings()).toBe(0);
      expect(stderr.strayOutputWarnings()).toBe(expected.afterFinish + expected.unknownRequest);
      expect(stderr.unknownUtilityWarnings()).toBe(expected.unknownUtility);
      expect(diagnostics.lastProtocolError).toBeNull();
    });
  }

  it("tokens for a request the client aborted (late, as an engine may send them): counted, no warning", async () => {
    const c = await connect();
    const aborted = run(c, "aborted-live", 1_000_000);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await c.abort("aborted-live");
    expect((await aborted).finalOutputs).toBe(1);
    await engine!.inject("unknown-request", { requestId: "aborted-live" });
    const fresh = await run(c, "fresh", 10);
    expect(fresh.tokens).toEqual(expectedTokens("fresh", prompt("fresh"), 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const diagnostics = await c.diagnostics();
    expect(counted(diagnostics).afterAbort).toBeGreaterThanOrEqual(1); // the injection, plus any real late output
    expect({ ...counted(diagnostics), afterAbort: 0 }).toEqual(NONE);
    expect(stderr.strayOutputWarnings()).toBe(0);
    expect(c.isHealthy).toBe(true);
    expect(uncaught).toEqual([]);
  });
});
