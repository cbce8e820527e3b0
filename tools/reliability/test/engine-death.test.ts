// Priority 1: an engine dies mid-stream. Two mock-engine processes (engine 0 and engine 1) dial the same
// handshake address; one of them dies. Its streams must fail with EngineDeadError quickly, the other
// engine's streams must complete with the right tokens, and the health error must name the dead engine.

import { EngineDeadError, FinishReason } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatRequest,
  connectEngines,
  ipcAddress,
  removeIpcFiles,
  type Setup,
  type StreamOutcome,
  type Tracked,
  track,
  withTimeout,
} from "../src/harness.ts";

let setup: Setup | undefined;
afterEach(async () => {
  await setup?.close();
  setup = undefined;
  removeIpcFiles();
});

const PER_ENGINE = 8;
const SURVIVOR_TOKENS = 300; // ~1.5 s at 5 ms per step: still running when the other engine dies

async function openStreams(setupNow: Setup, rank: number, maxTokens: number, tag: string) {
  return Promise.all(
    Array.from({ length: PER_ENGINE }, (_, i) =>
      track(setupNow.client, { ...chatRequest(`${tag}-${i}`, maxTokens), dataParallelRank: rank }),
    ),
  );
}

function expectCompleted(tracked: readonly Tracked[], outcomes: readonly StreamOutcome[]) {
  outcomes.forEach((o, i) => {
    const request = chatRequest(tracked[i]!.requestId, SURVIVOR_TOKENS);
    expect(o.error).toBeUndefined();
    expect(o.finishReason).toBe(FinishReason.LENGTH);
    expect(o.finalOutputs).toBe(1);
    expect(o.tokens).toEqual(expectedTokens(o.requestId, request.promptTokenIds, SURVIVOR_TOKENS));
  });
}

describe("engine death mid-stream (two engine processes)", () => {
  it("SIGKILL of engine 1: its streams fail with EngineDeadError within 1 s, engine 0's complete", async () => {
    setup = await connectEngines([
      { engineIndices: [0], stepMs: 5 },
      { engineIndices: [1], stepMs: 5 },
    ]);
    const { client, engines } = setup;
    let healthAt = 0;
    client.onHealthChange(() => {
      healthAt = performance.now();
    });
    const doomed = await openStreams(setup, 1, 1_000_000, "doomed");
    const survivors = await openStreams(setup, 0, SURVIVOR_TOKENS, "survivor");
    const toAbort = await track(client, {
      ...chatRequest("survivor-to-abort", 1_000_000),
      dataParallelRank: 0,
    });
    expect(doomed.every((t) => t.engineIndex === 1)).toBe(true);
    expect(survivors.every((t) => t.engineIndex === 0)).toBe(true);
    await Promise.all([...doomed, ...survivors].map((t) => t.firstOutput));

    const killedAt = performance.now();
    engines[1]!.kill("SIGKILL");
    const failed = await withTimeout(Promise.all(doomed.map((t) => t.outcome)), 10_000, "doomed streams");
    const first = Math.min(...failed.map((o) => o.endedAt)) - killedAt;
    const last = Math.max(...failed.map((o) => o.endedAt)) - killedAt;
    console.log(
      `[reliability] SIGKILL detection: first stream failed after ${first.toFixed(1)} ms, last after ${last.toFixed(1)} ms, health error after ${(healthAt - killedAt).toFixed(1)} ms`,
    );
    for (const o of failed) {
      expect(o.error).toBeInstanceOf(EngineDeadError);
      expect((o.error as EngineDeadError).engineIndex).toBe(1);
      expect(o.finalOutputs).toBe(0);
    }
    expect(last).toBeLessThan(1_000);

    // The health error names the engine and the cause.
    const health = client.healthError;
    expect(health).toBeInstanceOf(EngineDeadError);
    expect((health as EngineDeadError).engineIndex).toBe(1);
    expect(health!.message).toMatch(/^Engine 1 is dead: .*without ENGINE_CORE_DEAD/);
    expect(healthAt - killedAt).toBeLessThan(1_000);

    // Engine 0's streams were still running when engine 1 died, and complete in full.
    const completed = await withTimeout(
      Promise.all(survivors.map((t) => t.outcome)),
      20_000,
      "survivor streams",
    );
    expect(Math.min(...completed.map((o) => o.endedAt))).toBeGreaterThan(killedAt + last);
    expectCompleted(survivors, completed);
    expect(await engines[1]!.exited).toEqual({ code: null, signal: "SIGKILL" });
    // Engine 0 never saw an ABORT: nothing of its work was cancelled by the other engine's death.
    expect(engines[0]!.events.some((e) => e.event === "abort")).toBe(false);
    await toAbort.firstOutput;

    // Documented client behaviour (as vLLM's clients): after an engine death new calls fail with the
    // recorded health error, even though engine 0 still serves the requests it already has.
    await expect(client.call(chatRequest("after-death", 2))).rejects.toBe(health);
    // But the requests engine 0 still serves can be aborted: the stream ends, the engine gets ABORT.
    await client.abort("survivor-to-abort");
    const aborted = await withTimeout(toAbort.outcome, 5_000, "the aborted survivor stream");
    expect(aborted.error).toBeUndefined();
    expect(aborted.finishReason).toBe(FinishReason.ABORT);
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("survivor-to-abort"),
      5_000,
    );
  });

  it("ENGINE_CORE_DEAD from the only engine: detected and attributed before the engine process exits", async () => {
    setup = await connectEngines([{ engineIndices: [0], stepMs: 5, faults: { deadSentinelAfterSteps: 40 } }]);
    const { client, engines } = setup;
    const engine = engines[0]!;
    let exitSeenAt = 0;
    void engine.exited.then(() => {
      exitSeenAt = Date.now();
    });
    const doomed = await openStreams(setup, 0, 1_000_000, "sentinel");
    const failed = await withTimeout(Promise.all(doomed.map((t) => t.outcome)), 10_000, "doomed streams");
    const detectedAt = Date.now() - (performance.now() - Math.max(...failed.map((o) => o.endedAt)));
    const sent = await engine.waitForEvent((e) => e.event === "fault" && e.kind === "engine-dead");
    const exitEvent = await engine.waitForEvent((e) => e.event === "exit", 10_000);
    await engine.exited;
    console.log(
      `[reliability] ENGINE_CORE_DEAD (1 engine): sentinel sent at +0 ms, last stream failed at +${detectedAt - (sent.ts as number)} ms, engine logged exit at +${(exitEvent.ts as number) - (sent.ts as number)} ms, parent saw the exit at +${exitSeenAt - (sent.ts as number)} ms`,
    );
    for (const o of failed) {
      expect(o.error).toBeInstanceOf(EngineDeadError);
      expect((o.error as EngineDeadError).engineIndex).toBe(0);
      expect((o.error as EngineDeadError).reason).toContain("ENGINE_CORE_DEAD");
    }
    expect(detectedAt).toBeLessThanOrEqual(exitSeenAt);
    expect(detectedAt - (sent.ts as number)).toBeLessThan(1_000);
    const health = client.healthError as EngineDeadError;
    expect(health).toBeInstanceOf(EngineDeadError);
    expect(health.engineIndex).toBe(0);
    expect(health.message).toMatch(/^Engine 0 is dead: the engine sent ENGINE_CORE_DEAD/);
  });

  it("ENGINE_CORE_DEAD from engine 1 of 2: only its streams fail, before it exits; engine 0's complete", async () => {
    // The sentinel is a bare 16-byte frame with no engine index; each engine pushes to its own output socket
    // (its INIT names it), so the socket it arrives on names the engine.
    setup = await connectEngines([
      { engineIndices: [0], stepMs: 5 },
      { engineIndices: [1], stepMs: 5, faults: { deadSentinelAfterSteps: 40 } },
    ]);
    const { client, engines } = setup;
    expect(new Set(client.outputAddresses).size).toBe(2);
    let exitSeenAt = 0;
    void engines[1]!.exited.then(() => {
      exitSeenAt = Date.now();
    });
    const doomed = await openStreams(setup, 1, 1_000_000, "sentinel");
    const survivors = await openStreams(setup, 0, SURVIVOR_TOKENS, "bystander");
    const failed = await withTimeout(Promise.all(doomed.map((t) => t.outcome)), 10_000, "doomed streams");
    const detectedAt = Date.now() - (performance.now() - Math.max(...failed.map((o) => o.endedAt)));
    const sent = await engines[1]!.waitForEvent((e) => e.event === "fault" && e.kind === "engine-dead");
    await engines[1]!.exited;
    console.log(
      `[reliability] ENGINE_CORE_DEAD (engine 1 of 2, own output socket): streams failed at +${detectedAt - (sent.ts as number)} ms, parent saw the exit at +${exitSeenAt - (sent.ts as number)} ms`,
    );
    for (const o of failed) {
      expect(o.error).toBeInstanceOf(EngineDeadError);
      expect((o.error as EngineDeadError).engineIndex).toBe(1);
      expect((o.error as EngineDeadError).reason).toContain("ENGINE_CORE_DEAD");
    }
    expect(detectedAt).toBeLessThanOrEqual(exitSeenAt);
    expect(detectedAt - (sent.ts as number)).toBeLessThan(1_000);
    expectCompleted(
      survivors,
      await withTimeout(Promise.all(survivors.map((t) => t.outcome)), 15_000, "bystanders"),
    );
    const health = client.healthError as EngineDeadError;
    expect(health.engineIndex).toBe(1);
    expect(health.message).toMatch(/^Engine 1 is dead: the engine sent ENGINE_CORE_DEAD/);
    expect(engines[0]!.events.some((e) => e.event === "exit" || e.event === "abort")).toBe(false);
  });

  it("ENGINE_CORE_DEAD on a shared output socket (explicit localOutputAddress): attributed by the exit that follows", async () => {
    // One output address for both engines (as in bootstrapped mode): the sentinel names no engine until the
    // sender's input connection closes, which vLLM's engine does right after sending it.
    setup = await connectEngines(
      [
        { engineIndices: [0], stepMs: 5 },
        { engineIndices: [1], stepMs: 5, faults: { deadSentinelAfterSteps: 40 } },
      ],
      { localOutputAddress: ipcAddress("shared-out") },
    );
    const { client, engines } = setup;
    expect(new Set(client.outputAddresses).size).toBe(1);
    const doomed = await openStreams(setup, 1, 1_000_000, "sentinel");
    const survivors = await openStreams(setup, 0, SURVIVOR_TOKENS, "bystander");
    const failed = await withTimeout(Promise.all(doomed.map((t) => t.outcome)), 10_000, "doomed streams");
    const detectedAt = Date.now() - (performance.now() - Math.max(...failed.map((o) => o.endedAt)));
    const sent = await engines[1]!.waitForEvent((e) => e.event === "fault" && e.kind === "engine-dead");
    console.log(
      `[reliability] ENGINE_CORE_DEAD (engine 1 of 2, shared output socket): streams failed at +${detectedAt - (sent.ts as number)} ms`,
    );
    for (const o of failed) {
      expect(o.error).toBeInstanceOf(EngineDeadError);
      expect((o.error as EngineDeadError).engineIndex).toBe(1);
      expect((o.error as EngineDeadError).reason).toContain("attributed by its input connection closing");
    }
    expect(detectedAt - (sent.ts as number)).toBeLessThan(1_000);
    expectCompleted(
      survivors,
      await withTimeout(Promise.all(survivors.map((t) => t.outcome)), 15_000, "bystanders"),
    );
    expect((client.healthError as EngineDeadError).engineIndex).toBe(1);
  });
});

describe("frozen engine (SIGSTOP)", () => {
  it("is declared dead by the ZMTP heartbeat; its streams and a pending utility call fail with EngineDeadError", async () => {
    setup = await connectEngines([
      { engineIndices: [0], stepMs: 5 },
      { engineIndices: [1], stepMs: 5 },
    ]);
    const { client, engines } = setup;
    const doomed = await openStreams(setup, 1, 1_000_000, "frozen");
    const survivors = await openStreams(setup, 0, SURVIVOR_TOKENS, "alive");
    await Promise.all([...doomed, ...survivors].map((t) => t.firstOutput));
    const stoppedAt = performance.now();
    engines[1]!.kill("SIGSTOP");
    try {
      // Engine 0 answers at once; engine 1 never does, so the call stays pending until engine 1 is dead.
      const utility = client.callUtility("echo", ["ping"]).then(
        () => null,
        (error: unknown) => ({ error, at: performance.now() }),
      );
      const failed = await withTimeout(Promise.all(doomed.map((t) => t.outcome)), 15_000, "frozen streams");
      const detection = Math.max(...failed.map((o) => o.endedAt)) - stoppedAt;
      const utilityOutcome = await withTimeout(utility, 5_000, "the pending utility call");
      console.log(
        `[reliability] SIGSTOP: engine 1 declared dead after ${detection.toFixed(0)} ms (heartbeat), pending utility call failed after ${((utilityOutcome?.at ?? 0) - stoppedAt).toFixed(0)} ms`,
      );
      for (const o of failed) {
        expect(o.error).toBeInstanceOf(EngineDeadError);
        expect((o.error as EngineDeadError).engineIndex).toBe(1);
      }
      expect((utilityOutcome?.error as EngineDeadError | undefined)?.engineIndex).toBe(1);
      expect(utilityOutcome?.error).toBeInstanceOf(EngineDeadError);
      expect(client.healthError?.message).toMatch(/^Engine 1 is dead: .*heartbeat/);
      // The transport's ZMTP heartbeat: 1 s interval, 5 s timeout (+ the 50 ms vanish grace).
      expect(detection).toBeGreaterThan(2_000);
      expect(detection).toBeLessThan(12_000);
      const completed = await withTimeout(Promise.all(survivors.map((t) => t.outcome)), 20_000, "survivors");
      expectCompleted(survivors, completed);
    } finally {
      engines[1]!.kill("SIGKILL");
    }
  });
});
