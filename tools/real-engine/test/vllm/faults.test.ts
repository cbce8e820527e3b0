// Engine faults against vLLM's real engine core: a SIGKILLed engine, an executor failure (vLLM's
// ENGINE_CORE_DEAD path) on one DP rank, and SIGTERM with and without `--shutdown-timeout` (vLLM's graceful
// shutdown: `EngineCoreProc._handle_shutdown` in vllm/v1/engine/core.py, the headless parent's
// `CoreEngineProcManager.shutdown(timeout)` in vllm/entrypoints/cli/serve.py and vllm/v1/utils.py `shutdown`).
// Every scenario kills its engine, so each has its own; they start in parallel in one beforeAll.
import { readdirSync, readFileSync } from "node:fs";
import { type EngineCoreClient, type EngineCoreOutput, FinishReason } from "@vllm-engine-core/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectToRealEngine,
  freePort,
  type RealEngine,
  type RealEngineOptions,
  startRealEngine,
} from "../../src/index.ts";
import { kit, title } from "./tier.ts";

interface Outcome {
  readonly tokenIds: number[];
  readonly finishReason: number | null;
  readonly error: unknown;
}

/** Reads a stream to its end or its failure; `onFirst` runs after the first output with tokens. */
async function drain(stream: AsyncIterable<EngineCoreOutput>, onFirst?: () => void): Promise<Outcome> {
  const tokenIds: number[] = [];
  let finishReason: number | null = null;
  try {
    for await (const o of stream) {
      if (tokenIds.length === 0 && o.newTokenIds.length > 0) onFirst?.();
      tokenIds.push(...o.newTokenIds);
      finishReason = o.finishReason;
    }
    return { tokenIds, finishReason, error: null };
  } catch (error) {
    return { tokenIds, finishReason, error };
  }
}

/** Live processes of process group `pgid` (the launcher starts vLLM as a group leader), with their command. */
function groupMembers(pgid: number): string[] {
  const members: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] !== "Z" && Number(fields[2]) === pgid) {
        const command = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        members.push(`${entry} ${command}`);
      }
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

/** Resolves with the group's members once it is empty or `timeoutMs` passed (a SIGKILLed process takes a moment). */
async function groupGone(pgid: number, timeoutMs: number): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const members = groupMembers(pgid);
    if (members.length === 0 || performance.now() > deadline) return members;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type Scenario = "sigkill" | "failAtStep" | "sigterm" | "sigtermTimeout";
const STEP_MS = 20;
const SHUTDOWN_TIMEOUT_S = 3;
const scenarios: Record<Scenario, Omit<RealEngineOptions, "kit" | "port">> = {
  sigkill: { maxModelLen: 1024, executor: { stepMs: STEP_MS } },
  // Both ranks fail on their own 3rd step with tokens; only rank 0 gets work.
  failAtStep: { maxModelLen: 1024, dataParallelSize: 2, executor: { failAtStep: 3, stepMs: STEP_MS } },
  sigterm: { maxModelLen: 1024, executor: { stepMs: STEP_MS, logRequests: true } },
  sigtermTimeout: {
    maxModelLen: 1024,
    extraFlags: ["--shutdown-timeout", String(SHUTDOWN_TIMEOUT_S)],
    executor: { stepMs: STEP_MS, logRequests: true },
  },
};

describe.skipIf(!kit)(title("real engine faults"), () => {
  const engines = new Map<Scenario, { engine: RealEngine; client: EngineCoreClient }>();
  beforeAll(async () => {
    const found = kit;
    if (!found) return;
    const names = Object.keys(scenarios) as Scenario[];
    const started = names.map(async (name) => {
      const engine = startRealEngine({ kit: found, port: await freePort(), ...scenarios[name] });
      engines.set(name, { engine, client: null as unknown as EngineCoreClient });
      const client = await connectToRealEngine(engine);
      engines.set(name, { engine, client });
    });
    await Promise.all(started);
  });
  afterAll(async () => {
    for (const { engine, client } of engines.values()) {
      await client?.shutdown().catch(() => {});
      await engine.stop();
      // Nothing of the engine's process group outlives it (the headless parent, every engine core).
      expect(await groupGone(engine.pid, 10_000)).toEqual([]);
    }
  });
  const use = (name: Scenario) => {
    const got = engines.get(name);
    if (!got?.client) throw new Error(`no ${name} engine`);
    return got;
  };

  it("SIGKILL mid-stream: the stream fails with ENGINE_DEAD, healthError is set, new calls fail fast", async () => {
    const { engine, client } = use("sigkill");
    const stream = await client.call({
      requestId: "killed",
      promptTokenIds: [1, 2, 3],
      samplingParams: { maxTokens: 500 },
    });
    const outcome = await drain(stream, () => engine.kill("SIGKILL"));
    expect(outcome.tokenIds.length).toBeGreaterThan(0);
    expect(outcome.tokenIds.length).toBeLessThan(500);
    expect(outcome.error).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    expect(client.isHealthy).toBe(false);
    expect(client.healthError).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });

    const t0 = performance.now();
    const late = await client
      .call({ requestId: "after-kill", promptTokenIds: [1], samplingParams: { maxTokens: 2 } })
      .then(drain)
      .then(
        (o) => o.error,
        (e: unknown) => e,
      );
    expect(late).toMatchObject({ code: "ENGINE_DEAD" });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await engine.exited).toMatchObject({ signal: "SIGKILL" });
  });

  it("executor failure at step 3 on rank 0: vLLM's ENGINE_CORE_DEAD reaches the client as ENGINE_DEAD naming engine 0", async () => {
    const { engine, client } = use("failAtStep");
    const stream = await client.call({
      requestId: "doomed-rank0",
      promptTokenIds: [1, 2, 3],
      dataParallelRank: 0,
      samplingParams: { maxTokens: 50 },
    });
    const outcome = await drain(stream);
    // Step 1 is the prefill (first token), step 2 a decode; step 3 raises: two tokens came out.
    expect(outcome.tokenIds).toHaveLength(2);
    expect(outcome.error).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    expect(client.healthError).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    expect(String((client.healthError as Error).message)).toMatch(/ENGINE_CORE_DEAD/);
    await engine.waitForLog(/failing step 3 on purpose/, 30_000);
    // vLLM's headless parent then stops the whole deployment: the process group exits by itself.
    await engine.exited;
  });

  it("SIGTERM without --shutdown-timeout: vLLM's process manager kills the engine at once, no ABORT is sent", async () => {
    const { engine, client } = use("sigterm");
    const stream = await client.call({
      requestId: "term-now",
      promptTokenIds: [4, 5, 6],
      samplingParams: { maxTokens: 500 },
    });
    // SIGTERM to the `vllm serve` process only, as `kill PID` or a container stop does.
    const outcome = await drain(stream, () => process.kill(engine.pid, "SIGTERM"));
    // The engine core's own abort path (`_handle_shutdown`, timeout 0) never gets to send the ABORT outputs:
    // the parent waits "up to 0 seconds" and kills it first, so the stream ends as for a crash.
    expect(outcome.finishReason).toBeNull();
    expect(outcome.tokenIds.length).toBeLessThan(500);
    expect(outcome.error).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    expect(client.healthError).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    await engine.waitForLog(/Waiting up to 0 seconds for processes to exit/, 10_000);
    await engine.waitForLog(/force killing remaining process EngineCore/, 10_000);
    await engine.exited;
  });

  it("SIGTERM with --shutdown-timeout: in-flight requests drain, new work is refused, the rest dies at the timeout", async () => {
    const { engine, client } = use("sigtermTimeout");
    const short = await client.call({
      requestId: "drains",
      promptTokenIds: [7, 8, 9],
      samplingParams: { maxTokens: 30 }, // ~0.6 s at 20 ms a step
    });
    const long = await client.call({
      requestId: "outlives-timeout",
      promptTokenIds: [7, 8, 10],
      samplingParams: { maxTokens: 1000 }, // ~20 s: longer than the timeout
    });
    const t0 = performance.now();
    const shortDone = drain(short, () => process.kill(engine.pid, "SIGTERM"));
    const longDone = drain(long);
    await engine.waitForLog(/\[shutdown\] EngineCore: start mode=drain timeout=3s/, 30_000);
    // During the drain vLLM answers a new request with an ABORT output and a utility call with a failure.
    const refused = await client
      .call({ requestId: "during-drain", promptTokenIds: [1, 2], samplingParams: { maxTokens: 4 } })
      .then(drain);
    expect(refused).toEqual({ tokenIds: [], finishReason: FinishReason.ABORT, error: null });
    await expect(client.isSchedulerPaused()).rejects.toMatchObject({
      code: "UTILITY_CALL_FAILED",
      failureMessage: "Server shutting down",
    });

    const [s, l] = await Promise.all([shortDone, longDone]);
    expect(s).toMatchObject({ finishReason: FinishReason.LENGTH, error: null });
    expect(s.tokenIds).toHaveLength(30);
    // The long request is not aborted at the timeout: the parent kills the engine core, the stream fails.
    expect(l.finishReason).toBeNull();
    expect(l.tokenIds.length).toBeGreaterThan(30);
    expect(l.tokenIds.length).toBeLessThan(1000);
    expect(l.error).toMatchObject({ code: "ENGINE_DEAD", engineIndex: 0 });
    expect(performance.now() - t0).toBeGreaterThan((SHUTDOWN_TIMEOUT_S - 1) * 1000);
    await engine.waitForLog(/request drains finished after 30 outputs/, 10_000);
    await engine.waitForLog(/force killing remaining process EngineCore/, 10_000);
    await engine.exited;
  });
});
