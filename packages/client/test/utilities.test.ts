// Typed utility helpers and bounded utility calls, against the mock engine in a child process over real
// sockets. The mock runs utility calls as vLLM's EngineCoreProc does (argument conversion included), so a
// helper that sends what vLLM would reject fails here too.
import type { MockEngineEvent } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  InconsistentUtilityResultsError,
  InvalidRequestError,
  UtilityCallError,
  UtilityTimeoutError,
} from "../src/index.js";
import { connectToMockEngine, type Harness } from "./helpers.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

let markers = 0;

/**
 * Waits until the mock's event log (its stdout, which may trail the replies) holds every call made so far:
 * each engine logs calls in arrival order, so a marker echo seen from every engine comes after them.
 */
async function flushLog(h: Harness): Promise<void> {
  const tag = `marker-${++markers}`;
  await h.client.callUtility("echo", [tag]);
  await Promise.all(
    h.client.engineIndices.map((index) =>
      h.engine.waitForEvent(
        (e) =>
          e.event === "utility" &&
          e.method === "echo" &&
          e.engineIndex === index &&
          (e.args as unknown[])[0] === tag,
      ),
    ),
  );
}

/** The arguments each engine received for the last call of `method` (from the mock's event log). */
async function argsOf(h: Harness, method: string): Promise<unknown[][]> {
  await flushLog(h);
  const calls = h.engine.events.filter((e: MockEngineEvent) => e.event === "utility" && e.method === method);
  const byEngine = new Map<number, unknown[]>();
  for (const call of calls) byEngine.set(call.engineIndex!, call.args as unknown[]);
  return [...byEngine.keys()].sort().map((index) => byEngine.get(index)!);
}

function utilityEvents(h: Harness): number {
  return h.engine.events.filter((e) => e.event === "utility").length;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("typed utility helpers (vLLM EngineCore signatures)", () => {
  it("every helper works against the mock engine and sends vLLM's argument shapes", async () => {
    harness = await connectToMockEngine({ engineCount: 2, readyResponse: { worldSize: 2 } });
    const h = harness;
    const { client } = h;
    const both = (args: unknown[]) => [args, args];

    expect(await client.isSleeping()).toBe(false);
    expect(await client.getSupportedTasks()).toEqual(["generate"]);

    // add_lora(lora_request: LoRARequest): LoRARequest is array_like → its positional array, every field.
    expect(await client.addLora({ loraName: "a", loraIntId: 1, loraPath: "/loras/a" })).toBe(true);
    expect(await argsOf(h, "add_lora")).toEqual(both([["a", 1, "/loras/a", null, null, false, false]]));
    expect(await client.addLora({ loraName: "a", loraIntId: 1, loraPath: "/loras/a" })).toBe(false);
    expect(
      await client.addLora({
        loraName: "b",
        loraIntId: 2,
        loraPath: "/loras/b",
        baseModelName: "base",
        tensorizerConfigDict: { tensorizer_uri: "s3://x" },
        loadInplace: true,
        is3dLoraWeight: true,
      }),
    ).toBe(true);
    expect(await argsOf(h, "add_lora")).toEqual(
      both([["b", 2, "/loras/b", "base", { tensorizer_uri: "s3://x" }, true, true]]),
    );
    expect(await client.listLoras()).toEqual([1, 2]);
    expect(await client.pinLora(2)).toBe(true);
    expect(await argsOf(h, "pin_lora")).toEqual(both([2]));
    const pinFailure = await rejection(client.pinLora(9));
    expect(pinFailure).toBeInstanceOf(UtilityCallError);
    expect((pinFailure as UtilityCallError).failureMessage).toBe(
      "Call to pin_lora method failed: Pinning failed. LoRA 9 is not registered.",
    );
    expect(await client.removeLora(1)).toBe(true);
    expect(await argsOf(h, "remove_lora")).toEqual(both([1]));
    expect(await client.removeLora(1)).toBe(false);
    expect(await client.listLoras()).toEqual([2]);

    expect(await client.resetPrefixCache()).toBe(true);
    expect(await argsOf(h, "reset_prefix_cache")).toEqual(both([false, false]));
    expect(await client.resetPrefixCache(true, true)).toBe(true);
    expect(await argsOf(h, "reset_prefix_cache")).toEqual(both([true, true]));
    await client.resetMmCache();
    await client.resetEncoderCache();
    expect(await argsOf(h, "reset_encoder_cache")).toEqual(both([]));

    // pause_scheduler(mode: PauseMode = "abort", clear_cache: bool = True)
    await client.pauseScheduler();
    expect(await argsOf(h, "pause_scheduler")).toEqual(both(["abort", true]));
    expect(await client.isSchedulerPaused()).toBe(true);
    await client.resumeScheduler();
    await client.pauseScheduler("keep", false);
    expect(await argsOf(h, "pause_scheduler")).toEqual(both(["keep", false]));
    expect(await client.isSleeping()).toBe(true);
    await client.resumeScheduler();
    await client.pauseScheduler("wait");
    await client.resumeScheduler();
    expect(await client.isSchedulerPaused()).toBe(false);

    // sleep(level: int = 1, mode: PauseMode = "abort"), wake_up(tags: list[str] | None = None)
    await client.sleep();
    expect(await argsOf(h, "sleep")).toEqual(both([1, "abort"]));
    expect(await client.isSleeping()).toBe(true);
    await client.wakeUp(["weights"]);
    expect(await argsOf(h, "wake_up")).toEqual(both([["weights"]]));
    expect(await client.isSleeping()).toBe(true); // kv_cache still asleep
    await client.wakeUp(["kv_cache"]);
    expect(await client.isSleeping()).toBe(false);
    await client.sleep(0, "keep");
    expect(await argsOf(h, "sleep")).toEqual(both([0, "keep"]));
    expect(await client.isSleeping()).toBe(true);
    await client.wakeUp(["scheduling"]);
    expect(await client.isSleeping()).toBe(false);
    await client.sleep(2, "wait");
    await client.wakeUp();
    expect(await argsOf(h, "wake_up")).toEqual(both([null]));
    expect(await client.isSleeping()).toBe(false);

    // profile(is_start: bool = True, profile_prefix: str | None = None)
    await client.startProfile("run-1");
    expect(await argsOf(h, "profile")).toEqual(both([true, "run-1"]));
    await client.stopProfile();
    expect(await argsOf(h, "profile")).toEqual(both([false, null]));

    // collective_rpc(method, timeout: float | None = None, args: tuple = (), kwargs: dict | None = None)
    expect(await client.collectiveRpc("rank")).toEqual([0, 1, 0, 1]);
    expect(await argsOf(h, "collective_rpc")).toEqual(both(["rank", null, [], null]));
    expect(await client.collectiveRpc("echo", { timeout: 2.5, args: [1, "x"], kwargs: { k: 1 } })).toEqual([
      [1, "x"],
      [1, "x"],
      [1, "x"],
      [1, "x"],
    ]);
    expect(await argsOf(h, "collective_rpc")).toEqual(both(["echo", 2.5, [1, "x"], { k: 1 }]));

    // save_sharded_state(path: str, pattern: str | None = None, max_size: int | None = None)
    await client.saveShardedState("/ckpt");
    expect(await argsOf(h, "save_sharded_state")).toEqual(both(["/ckpt", null, null]));
    await client.saveShardedState("/ckpt", "model-*.safetensors", 5_000_000);
    expect(await argsOf(h, "save_sharded_state")).toEqual(both(["/ckpt", "model-*.safetensors", 5_000_000]));

    await client.executeDummyBatch();
    expect(await client.getWeightVersion()).toBe("default");
    await client.setWeightVersion("v2");
    expect(await argsOf(h, "set_weight_version")).toEqual(both(["v2"]));
    expect(await client.getWeightVersion()).toBe("v2");
  });

  it("the mock rejects what vLLM rejects: the old addLora object form, a wrong literal, a missing argument", async () => {
    harness = await connectToMockEngine();
    const { client } = harness;
    const failureOf = async (method: string, args: unknown[]) => {
      const error = await rejection(client.callUtility(method, args));
      expect(error).toBeInstanceOf(UtilityCallError);
      return (error as UtilityCallError).failureMessage;
    };
    // What the client used to send for addLora: msgspec.convert(obj, LoRARequest) on an array_like struct.
    expect(await failureOf("add_lora", [{ loraName: "a", loraIntId: 1, loraPath: "/p" }])).toBe(
      "Call to add_lora method failed: Expected `array`, got `object`",
    );
    expect(await failureOf("pause_scheduler", ["later"])).toBe(
      "Call to pause_scheduler method failed: Invalid pause mode: later",
    );
    expect(await failureOf("remove_lora", [])).toBe(
      "Call to remove_lora method failed: EngineCore.remove_lora() missing 1 required positional argument: 'lora_id'",
    );
    expect(await failureOf("is_sleeping", [true])).toBe("Call to is_sleeping method failed: ");
    // The typed helper sends the form vLLM accepts.
    expect(await client.addLora({ loraName: "a", loraIntId: 1, loraPath: "/p" })).toBe(true);
  });

  it("typed helpers reject arguments vLLM's signatures do not allow before anything is sent", async () => {
    harness = await connectToMockEngine();
    const { client } = harness;
    await flushLog(harness);
    const before = utilityEvents(harness);
    const cases: [string, () => Promise<unknown>][] = [
      ["sleep(level)", () => client.sleep(1.5)],
      ["sleep(mode)", () => client.sleep(1, "later" as never)],
      ["pauseScheduler(mode)", () => client.pauseScheduler("ABORT" as never)],
      ["pauseScheduler(clearCache)", () => client.pauseScheduler("abort", 1 as never)],
      ["wakeUp(tags)", () => client.wakeUp("weights" as never)],
      ["resetPrefixCache(resetRunningRequests)", () => client.resetPrefixCache("yes" as never)],
      ["removeLora(loraId)", () => client.removeLora(0)],
      ["pinLora(loraId)", () => client.pinLora(1.5)],
      ["addLora(lora)", () => client.addLora({ loraName: "a", loraIntId: 0, loraPath: "/p" })],
      ["addLora(lora)", () => client.addLora({ loraName: "a", loraIntId: 1 })],
      [
        "addLora(lora).lora_int_id",
        () => client.addLora({ loraName: "a", loraIntId: "1" as never, loraPath: "/p" }),
      ],
      ["startProfile(profilePrefix)", () => client.startProfile(3 as never)],
      ["collectiveRpc(method)", () => client.collectiveRpc("")],
      ["collectiveRpc(timeout)", () => client.collectiveRpc("rank", { timeout: -1 })],
      ["collectiveRpc(kwargs)", () => client.collectiveRpc("rank", { kwargs: [] as never })],
      ["saveShardedState(path)", () => client.saveShardedState(null as never)],
      ["saveShardedState(maxSize)", () => client.saveShardedState("/p", null, 1.5)],
      ["setWeightVersion(weightVersion)", () => client.setWeightVersion(2 as never)],
    ];
    for (const [field, call] of cases) {
      const error = await rejection(call());
      expect(error, field).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).field, field).toBe(field);
    }
    await flushLog(harness);
    expect(utilityEvents(harness)).toBe(before + 1); // the marker only
  });
});

describe("bounded utility calls ({ signal, timeoutMs })", () => {
  it("a hung engine: UtilityTimeoutError naming the method, the silent engines and the timeout", async () => {
    // Engine 1 never answers is_sleeping; engine 0 does at once.
    harness = await connectToMockEngine({
      engineCount: 2,
      faults: { utilityDelayMs: 600_000, utilityDelayMethods: ["is_sleeping"], utilityDelayEngines: [1] },
    });
    const { client } = harness;
    const started = performance.now();
    const error = await rejection(client.callUtility("is_sleeping", [], { timeoutMs: 300 }));
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(UtilityTimeoutError);
    expect(error).toMatchObject({
      code: "UTILITY_TIMEOUT",
      method: "is_sleeping",
      engineIndices: [1],
      timeoutMs: 300,
    });
    expect((error as Error).message).toContain("engine 1 within 300 ms");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(10_000);
    // The connection is fine otherwise.
    expect(await client.callUtility("echo", [1])).toEqual([[1], [1]]);
    expect(client.isHealthy).toBe(true);
  });

  it("callUtilityConsensus and the typed helpers take the same bounds", async () => {
    harness = await connectToMockEngine({
      faults: { utilityDelayMs: 600_000, utilityDelayMethods: ["is_sleeping", "sleep"] },
    });
    const { client } = harness;
    const consensus = await rejection(client.callUtilityConsensus("is_sleeping", [], { timeoutMs: 200 }));
    expect(consensus).toMatchObject({
      name: "UtilityTimeoutError",
      method: "is_sleeping",
      engineIndices: [0],
    });
    const helper = await rejection(client.isSleeping({ timeoutMs: 200 }));
    expect(helper).toBeInstanceOf(UtilityTimeoutError);
    const sleep = await rejection(client.sleep(1, "abort", { timeoutMs: 200 }));
    expect(sleep).toMatchObject({ name: "UtilityTimeoutError", method: "sleep", timeoutMs: 200 });
    // A helper with a generous bound on a method that answers resolves normally.
    expect(await client.resetPrefixCache(false, false, { timeoutMs: 10_000 })).toBe(true);
    const controller = new AbortController();
    const aborted = client.isSleeping({ signal: controller.signal });
    controller.abort(new Error("not waiting any more"));
    expect(((await rejection(aborted)) as Error).message).toBe("not waiting any more");
  });

  it("aborting the signal rejects with its reason; an aborted signal sends nothing", async () => {
    harness = await connectToMockEngine({
      faults: { utilityDelayMs: 600_000, utilityDelayMethods: ["is_sleeping"] },
    });
    const { client } = harness;
    const controller = new AbortController();
    const reason = new Error("user gave up");
    const pending = client.callUtility("is_sleeping", [], { signal: controller.signal });
    await harness.engine.waitForEvent((e) => e.event === "utility" && e.method === "is_sleeping");
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);

    await flushLog(harness);
    const before = utilityEvents(harness);
    const already = AbortSignal.abort(new Error("too late"));
    expect(((await rejection(client.callUtility("echo", [], { signal: already }))) as Error).message).toBe(
      "too late",
    );
    expect(((await rejection(client.removeLora(1, { signal: already }))) as Error).message).toBe("too late");
    await flushLog(harness);
    expect(utilityEvents(harness)).toBe(before + 1); // the marker only
    // AbortSignal.timeout works too (its reason is a TimeoutError DOMException).
    const timedOut = await rejection(
      client.callUtility("is_sleeping", [], { signal: AbortSignal.timeout(100) }),
    );
    expect((timedOut as Error).name).toBe("TimeoutError");
  });

  it("a reply after the timeout (or the abort) is dropped, counted as late and never delivered to a later call", async () => {
    harness = await connectToMockEngine({ faults: { utilityDelayMs: 1_000, utilityDelayMethods: ["echo"] } });
    const { client } = harness;
    const timedOut = await rejection(client.callUtility("echo", ["first"], { timeoutMs: 100 }));
    expect(timedOut).toBeInstanceOf(UtilityTimeoutError);
    const controller = new AbortController();
    const aborted = client.callUtility("echo", ["second"], { signal: controller.signal });
    controller.abort(new Error("stop"));
    await rejection(aborted);
    // The engine answers in order: "first" and "second" (both late) come before this call's own reply.
    expect(await client.callUtility("echo", ["third"])).toEqual([["third"]]);
    const diagnostics = await client.diagnostics();
    expect(diagnostics.lateUtilityReplies).toBe(2);
    expect(diagnostics.unknownUtilityReplies).toBe(0);
  });

  it("rejects invalid bounds with InvalidRequestError", async () => {
    harness = await connectToMockEngine();
    const { client } = harness;
    await flushLog(harness);
    const before = utilityEvents(harness);
    for (const timeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, "100", 2 ** 31]) {
      const error = await rejection(client.callUtility("echo", [], { timeoutMs: timeoutMs as number }));
      expect(error, String(timeoutMs)).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).field).toBe("options.timeoutMs");
    }
    const badSignal = await rejection(client.isSleeping({ signal: {} as AbortSignal }));
    expect((badSignal as InvalidRequestError).field).toBe("options.signal");
    expect(await client.callUtility("echo", [1], { timeoutMs: 2 ** 31 - 1 })).toEqual([[1]]);
    await flushLog(harness);
    expect(utilityEvents(harness)).toBe(before + 2); // that call and the marker
  });

  it("consensus across engines still applies with bounds", async () => {
    harness = await connectToMockEngine({ engineCount: 2 });
    const mismatch = await rejection(
      harness.client.callUtilityConsensus("engine_index", [], { timeoutMs: 5_000 }),
    );
    expect(mismatch).toBeInstanceOf(InconsistentUtilityResultsError);
  });
});
