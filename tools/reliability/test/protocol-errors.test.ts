// Undecodable output next to live streams (a raw ZeroMQ engine peer in a child process, src/rogue-engine.ts,
// over real sockets): what each kind of bad message fails, per the rule in
// packages/runtime/src/runtime-thread/output-faults.ts. Nothing may hang: every stream ends, every call settles.
// - Attributable (msgpack intact, the fault inside one request's output or a utility reply's result): only
//   the streams the message names fail, or only the call it answers, with a ProtocolError naming the field
//   and the engine; the other streams complete, the health stays clean.
// - Not attributable (garbage, a 2-frame "sentinel"), or a shape vLLM never sends (request outputs and a
//   utility reply in one message): the engine is dead with the ProtocolError as its health error, its
//   streams and pending utility calls fail at once and new work fails fast.
// - Repeated: the 3rd undecodable message from one engine within 10 s makes it dead, even if attributable.
import { EngineCoreClient, ProtocolError } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { drain, ipcAddress, removeIpcFiles, type StreamOutcome, sleep, withTimeout } from "../src/harness.ts";
import { type RogueEngine, startRogueEngine } from "../src/rogue-engine.ts";
import { ROGUE_BAD_RESULT_METHOD, ROGUE_HOLD_METHOD } from "../src/rogue-protocol.ts";
import { captureStderr, type StderrCapture } from "../src/stderr-capture.ts";

let uncaught: string[] = [];
const onUncaught = (e: unknown) => uncaught.push(String((e as Error)?.stack ?? e));
let stderr: StderrCapture;
let engine: RogueEngine | undefined;
let client: EngineCoreClient | undefined;
let healthChanges: Error[] = [];

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
  const handshakeAddress = ipcAddress("rogue-pe");
  engine = startRogueEngine({ handshakeAddress, stepMs: 5 });
  client = await EngineCoreClient.connect({
    transport: { mode: "handshake-owner", handshakeAddress, engineCount: 1, readyTimeoutMs: 20_000 },
  });
  client.onHealthChange((e) => healthChanges.push(e));
  return client;
}

const prompt = (id: string) => [1, 2, id.length];
const LIVE = ["live-a", "live-b", "live-c", "live-d"];
const TOKENS = 60;

/** Starts the four live streams and waits until they are mid-stream (60 tokens at 5 ms per step). */
async function startLive(c: EngineCoreClient): Promise<Map<string, Promise<StreamOutcome>>> {
  const outcomes = new Map<string, Promise<StreamOutcome>>();
  for (const id of LIVE) {
    const stream = await c.call({
      requestId: id,
      promptTokenIds: prompt(id),
      samplingParams: { maxTokens: TOKENS },
    });
    outcomes.set(id, drain(id, stream));
  }
  await sleep(60);
  return outcomes;
}

async function settle(outcomes: Map<string, Promise<StreamOutcome>>): Promise<Map<string, StreamOutcome>> {
  const results = await withTimeout(Promise.all(outcomes.values()), 20_000, "live streams");
  return new Map(results.map((r) => [r.requestId, r]));
}

function expectComplete(r: StreamOutcome): void {
  expect({ id: r.requestId, error: r.error?.message, fin: r.finalOutputs }).toEqual({
    id: r.requestId,
    error: undefined,
    fin: 1,
  });
  expect(r.tokens, r.requestId).toEqual(expectedTokens(r.requestId, prompt(r.requestId), TOKENS));
}

function expectProtocolError(error: unknown, expected: Partial<ProtocolError>): ProtocolError {
  expect(error).toBeInstanceOf(ProtocolError);
  expect(error).toMatchObject({
    code: "PROTOCOL_ERROR",
    struct: "EngineCoreOutputs",
    engineIndex: 0,
    ...expected,
  });
  return error as ProtocolError;
}

/** The same error, rebuilt on this thread from another message (a stream's failure, a call's rejection). */
function expectSame(error: unknown, health: Error, what: string): void {
  expect(error, what).toBeInstanceOf(ProtocolError);
  expect((error as Error).message, what).toBe(health.message);
}

/** After an engine died of a protocol error: new work fails fast with the same error. */
async function expectFailsFast(c: EngineCoreClient, health: Error): Promise<void> {
  const started = performance.now();
  await expect(
    c.call({ requestId: "after", promptTokenIds: [1], samplingParams: { maxTokens: 3 } }),
  ).rejects.toBe(health);
  await expect(c.resetPrefixCache()).rejects.toBe(health);
  expect(performance.now() - started).toBeLessThan(2_000);
}

async function diagnosticsAfter(c: EngineCoreClient) {
  await sleep(100); // late warnings reach stderr
  const d = await c.diagnostics();
  return {
    undecodable: d.undecodableOutputMessages,
    requests: d.requestsFailedByProtocolError,
    utilityCalls: d.utilityCallsFailedByProtocolError,
    engines: d.enginesDeadByProtocolError,
  };
}

describe("undecodable output: what it fails", () => {
  it("an output whose request ids are readable: those streams fail with a ProtocolError, the others complete", async () => {
    const c = await connect();
    const outcomes = await startLive(c);
    await engine!.inject("bad-token-ids", { requestId: "live-a", otherRequestId: "live-b" });
    const results = await settle(outcomes);
    for (const id of ["live-a", "live-b"]) {
      const error = expectProtocolError(results.get(id)!.error, {
        field: "EngineCoreOutputs.outputs[1].new_token_ids",
        outcome: "requests-failed",
      });
      expect(error.message).toContain("from engine 0");
    }
    expectComplete(results.get("live-c")!);
    expectComplete(results.get("live-d")!);
    // The connection is healthy and fully usable.
    expect(healthChanges).toEqual([]);
    expect(await c.resetPrefixCache()).toBe(true);
    const fresh = await drain(
      "fresh",
      await c.call({
        requestId: "fresh",
        promptTokenIds: prompt("fresh"),
        samplingParams: { maxTokens: 10 },
      }),
    );
    expect(fresh.tokens).toEqual(expectedTokens("fresh", prompt("fresh"), 10));
    expect(await diagnosticsAfter(c)).toEqual({ undecodable: 1, requests: 2, utilityCalls: 0, engines: 0 });
    expect(stderr.droppedWarnings()).toBe(1);
    expect(uncaught).toEqual([]);
  });

  it("an undecodable output that also carries another stream's last output: both streams fail, nothing half-delivered", async () => {
    // The runtime routes by the request ids and finish flags alone and the owner thread decodes, so the
    // runtime has already ended live-b when the decode fails there: live-b must still fail, not hang.
    const c = await connect();
    const outcomes = await startLive(c);
    await engine!.inject("bad-token-ids-finishing", { requestId: "live-a", otherRequestId: "live-b" });
    const results = await settle(outcomes);
    for (const id of ["live-a", "live-b"]) {
      expectProtocolError(results.get(id)!.error, {
        field: "EngineCoreOutputs.outputs[1].new_token_ids",
        outcome: "requests-failed",
      });
      expect(results.get(id)!.finalOutputs, id).toBe(0);
    }
    expectComplete(results.get("live-c")!);
    expectComplete(results.get("live-d")!);
    expect(healthChanges).toEqual([]);
    expect(await c.resetPrefixCache()).toBe(true);
    expect(await diagnosticsAfter(c)).toEqual({ undecodable: 1, requests: 2, utilityCalls: 0, engines: 0 });
    expect(uncaught).toEqual([]);
  });

  it("a tensor pointing at an aux frame that was not sent: that stream fails, the others complete", async () => {
    const c = await connect();
    const outcomes = await startLive(c);
    await engine!.inject("aux-index-out-of-range", { requestId: "live-a" });
    const results = await settle(outcomes);
    const error = expectProtocolError(results.get("live-a")!.error, { outcome: "requests-failed" });
    expect(error.field).toMatch(/^EngineCoreOutputs\.outputs\[0\]\.new_logprobs\./);
    for (const id of ["live-b", "live-c", "live-d"]) expectComplete(results.get(id)!);
    expect(c.isHealthy).toBe(true);
    expect(await diagnosticsAfter(c)).toEqual({ undecodable: 1, requests: 1, utilityCalls: 0, engines: 0 });
  });

  it("a utility reply whose call id is readable but whose result is not: that call fails, nothing else", async () => {
    const c = await connect();
    const outcomes = await startLive(c);
    const failed = c.callUtility(ROGUE_BAD_RESULT_METHOD, []).then(
      () => undefined,
      (e: unknown) => e,
    );
    expectProtocolError(await withTimeout(failed, 10_000, "utility call"), {
      field: "EngineCoreOutputs.utility_output.result",
      outcome: "utility-call-failed",
    });
    const results = await settle(outcomes);
    for (const id of LIVE) expectComplete(results.get(id)!);
    expect(healthChanges).toEqual([]);
    expect(await c.resetPrefixCache()).toBe(true);
    expect(await diagnosticsAfter(c)).toEqual({ undecodable: 1, requests: 0, utilityCalls: 1, engines: 0 });
  });

  for (const kind of ["garbage", "sentinel-plus-frame"] as const) {
    it(`${kind} (nothing attributable): the engine is dead, its streams and pending calls fail at once, new work fails fast`, async () => {
      const c = await connect();
      const outcomes = await startLive(c);
      const held = c.callUtility(ROGUE_HOLD_METHOD, []).then(
        () => undefined,
        (e: unknown) => e,
      );
      await sleep(20); // the call reached the engine
      await engine!.inject(kind);
      const results = await settle(outcomes);
      const health = expectProtocolError(c.healthError, { outcome: "engine-dead" });
      expect(health.message).toContain("Engine 0 is treated as dead");
      expect(healthChanges).toEqual([health]);
      for (const id of LIVE) expectSame(results.get(id)!.error, health, id);
      expectSame(await withTimeout(held, 5_000, "held utility call"), health, "held call");
      await expectFailsFast(c, health);
      expect(await diagnosticsAfter(c)).toEqual({ undecodable: 1, requests: 4, utilityCalls: 1, engines: 1 });
      expect(stderr.droppedWarnings()).toBe(1);
      expect(uncaught).toEqual([]);
    });
  }

  it("request outputs and a utility reply in one message (a shape vLLM never sends): the engine is dead", async () => {
    const c = await connect();
    const outcomes = await startLive(c);
    await engine!.inject("mixed-shape", { requestId: "live-a", callId: 1 });
    const results = await settle(outcomes);
    const health = expectProtocolError(c.healthError, {
      field: "EngineCoreOutputs.utility_output",
      outcome: "engine-dead",
    });
    expect(health.detail).toContain("a shape vLLM never sends");
    for (const id of LIVE) expectSame(results.get(id)!.error, health, id);
    // Not half-delivered: the 9 the message carried for live-a never reached its stream.
    expect(results.get("live-a")!.tokens).not.toContain(9);
    await expectFailsFast(c, health);
    expect(await diagnosticsAfter(c)).toMatchObject({ undecodable: 1, engines: 1 });
  });

  it("repeated: the 3rd undecodable message within 10 s makes the engine dead, though each was attributable", async () => {
    const c = await connect();
    const outcomes = await startLive(c);
    for (const ghost of ["ghost-1", "ghost-2"]) {
      await engine!.inject("bad-token-ids", { requestId: ghost, otherRequestId: `${ghost}-b` });
    }
    await sleep(100);
    expect(c.isHealthy).toBe(true); // two: nothing live was named, nothing failed
    await engine!.inject("bad-token-ids", { requestId: "ghost-3", otherRequestId: "ghost-3-b" });
    const results = await settle(outcomes);
    const health = expectProtocolError(c.healthError, { outcome: "engine-dead" });
    expect(health.detail).toContain("3 undecodable messages from this engine within 10 s");
    for (const id of LIVE) expectSame(results.get(id)!.error, health, id);
    await expectFailsFast(c, health);
    expect(await diagnosticsAfter(c)).toEqual({ undecodable: 3, requests: 4, utilityCalls: 0, engines: 1 });
  });
});
