// Utilities per vLLM version: a method the engine's version does not have fails with
// UtilityNotAvailableError before anything is sent, naming the method and the engine's version. The mock
// engine runs in a child process and announces its release through its registration (readyResponse).
import type { MockEngineEvent } from "@vllm-engine-core/mock-engine";
import {
  possibleVersions,
  UTILITY_METHODS,
  utilityAvailable,
  VLLM_VERSIONS,
} from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { UtilityCallError, UtilityNotAvailableError } from "../src/index.js";
import { connectToMockEngine, type Harness } from "./helpers.js";
import { connectToMixedEngines } from "./mixed-engines.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function refusal(promise: Promise<unknown>): Promise<UtilityNotAvailableError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UtilityNotAvailableError);
  return error as UtilityNotAvailableError;
}

/** The methods the engine received (its stdout log), after an echo round trip flushed it. */
async function methodsReceived(h: Harness): Promise<string[]> {
  const tag = `flush-${Math.random()}`;
  await h.client.callUtility("echo", [tag]);
  await h.engine.waitForEvent((e) => e.event === "utility" && (e.args as unknown[])[0] === tag);
  return h.engine.events
    .filter((e: MockEngineEvent) => e.event === "utility" && e.method !== "echo")
    .map((e) => e.method as string);
}

describe("utilities an engine's version lacks", () => {
  it("a v0.25.1 engine: the weight-version utilities are refused before sending, others are sent", async () => {
    harness = await connectToMockEngine({ readyResponse: { vllmVersion: "0.25.1" } });
    const { client } = harness;

    const get = await refusal(client.getWeightVersion());
    expect(get.code).toBe("UTILITY_NOT_AVAILABLE");
    expect(get).toMatchObject({
      method: "get_weight_version",
      engineIndex: 0,
      reportedVersion: "0.25.1",
      engineVersions: ["0.25"],
      since: "main",
    });
    expect(get.message).toBe(
      'Engine 0 (vLLM 0.25.1, v0.25.x) has no utility method "get_weight_version": it exists from vLLM main @c67fe497 on. ' +
        "Nothing was sent; call it only on engines of a vLLM version that has it (see the client README, utilities per version).",
    );
    expect((await refusal(client.setWeightVersion("v2"))).method).toBe("set_weight_version");
    // By name too: the method is known to be absent at 0.25.
    expect((await refusal(client.callUtility("get_weight_version"))).method).toBe("get_weight_version");
    // DP-engine utilities of main only, and one main removed (still there at 0.25: it is sent).
    expect((await refusal(client.callUtility("commit_prepared_elastic_ep"))).since).toBe("main");
    const removed = await client.callUtility("eep_handle_engine_core_notification", ["X"]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(removed).toBeInstanceOf(UtilityCallError); // the mock (a non-DP EngineCoreProc) has no such attribute

    // Methods every version has, and names the client does not know, are sent as before.
    expect(await client.isSleeping()).toBe(false);
    expect(await client.callUtility("engine_index")).toEqual([0]);
    expect(await methodsReceived(harness)).toEqual([
      "eep_handle_engine_core_notification",
      "is_sleeping",
      "engine_index",
    ]);
  });

  it("a main engine (a development build): the weight-version utilities are sent, a removed one is refused", async () => {
    harness = await connectToMockEngine();
    const { client } = harness;
    expect(await client.getWeightVersion()).toBe("default");
    const removed = await refusal(client.callUtility("eep_handle_engine_core_notification", ["X"]));
    expect(removed).toMatchObject({
      method: "eep_handle_engine_core_notification",
      reportedVersion: "0.26.0.dev0+mock",
      engineVersions: ["main", "next"],
      since: undefined,
      until: "0.25",
    });
    expect(removed.message).toContain("it was removed after vLLM v0.25.x");
    expect(await methodsReceived(harness)).toEqual(["get_weight_version"]);
  });

  it("several engines: one engine without the method refuses the whole call", async () => {
    harness = await connectToMixedEngines([undefined, "0.24.0"]); // engine 0 main, engine 1 v0.24.0
    const error = await refusal(harness.client.getWeightVersion());
    expect(error.engineIndex).toBe(1);
    expect(error.engineVersions).toEqual(["0.24"]);
    expect(harness.engine.events.filter((e) => e.event === "utility")).toEqual([]);
    expect(await harness.client.callUtility("engine_index")).toEqual([0, 1]);
  });

  it("a v0.22 registration (no vllm_version): the error says which version the keys show", () => {
    // The mock cannot drop registration keys; this checks the reading and the message without it.
    const v022 = { maxModelLen: 1, numGpuBlocks: 1, dpStatsAddress: null, dtype: "bfloat16" };
    expect(possibleVersions(v022 as never)).toEqual(["0.22"]);
    const e = new UtilityNotAvailableError({
      method: "get_weight_version",
      engineIndex: 3,
      engineVersions: ["0.22"],
      since: "main",
    });
    expect(e.message).toMatch(/^Engine 3 \(vLLM v0\.22\.x\) has no utility method "get_weight_version"/);
  });

  it("the registry the check reads: only methods with a version span can be refused", () => {
    for (const m of UTILITY_METHODS) {
      const everywhere = VLLM_VERSIONS.every((v) => utilityAvailable(m.name, v));
      expect(everywhere, m.name).toBe(m.since === undefined && m.until === undefined);
    }
    expect(utilityAvailable("no_such_method", "0.22")).toBeUndefined();
  });
});
