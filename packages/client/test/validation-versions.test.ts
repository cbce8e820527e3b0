// Request validation per vLLM version: where vllm/sampling_params.py's decode-time rules differ
// between v0.22.1, v0.23.0, v0.24.0, v0.25.1, the pin and main after it, each boundary is valid at the
// versions without the rule and refused, with the rule and its first version named, at the others.
// Then the same through call() against the mock engine in a child process, whose registration
// announces an older release.

import {
  VLLM_VERSION_INFO,
  VLLM_VERSIONS,
  type VllmVersion,
  versionHas,
  WIRE_CHANGES,
} from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidRequestError } from "../src/errors.js";
import { type CallRequest, PIN_VERSION, validateRequest } from "../src/index.js";
import { REQUEST_RULES, rulesFor } from "../src/validation/rules.js";
import { chatRequest, connectToMockEngine, type Harness } from "./helpers.js";
import { connectToMixedEngines } from "./mixed-engines.js";

const sampling = (sp: Record<string, unknown>): CallRequest =>
  ({ requestId: "r", promptTokenIds: [1, 2, 3], samplingParams: { maxTokens: 8, ...sp } }) as CallRequest;

function verdict(request: unknown, vllmVersion: VllmVersion | readonly VllmVersion[]) {
  try {
    validateRequest(request, { maxModelLen: 64, vllmVersion });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return error as InvalidRequestError;
  }
}

// [what, SamplingParams, rule refused from `since` on, since, field]
const BOUNDARIES: [string, Record<string, unknown>, string, VllmVersion, string][] = [
  [
    "thinking budget -2",
    { thinkingTokenBudget: -2 },
    "SamplingParams.thinking_token_budget.min",
    "0.23",
    "thinkingTokenBudget",
  ],
  [
    "thinking budget -2^40",
    { thinkingTokenBudget: -(2 ** 40) },
    "SamplingParams.thinking_token_budget.min",
    "0.23",
    "thinkingTokenBudget",
  ],
  ["temperature 2.5", { temperature: 2.5 }, "SamplingParams.temperature.max", "0.24", "temperature"],
  [
    "temperature 2 + 2^-51",
    { temperature: 2 + 2 ** -51 },
    "SamplingParams.temperature.max",
    "0.24",
    "temperature",
  ],
  ["temperature 1e308", { temperature: 1e308 }, "SamplingParams.temperature.max", "0.24", "temperature"],
  [
    "temperature NaN",
    { temperature: Number.NaN },
    "SamplingParams.temperature.finite",
    "0.24",
    "temperature",
  ],
  [
    "temperature +inf",
    { temperature: Number.POSITIVE_INFINITY },
    "SamplingParams.temperature.finite",
    "0.24",
    "temperature",
  ],
  // NaN is not < 1e-5: not greedy in any version, so n = 2 is fine where NaN is.
  [
    "temperature NaN, n 2",
    { temperature: Number.NaN, n: 2 },
    "SamplingParams.temperature.finite",
    "0.24",
    "temperature",
  ],
  [
    "repetition_penalty NaN",
    { repetitionPenalty: Number.NaN },
    "SamplingParams.repetition_penalty.finite",
    "0.24",
    "repetitionPenalty",
  ],
  [
    "repetition_penalty +inf",
    { repetitionPenalty: Number.POSITIVE_INFINITY },
    "SamplingParams.repetition_penalty.finite",
    "0.24",
    "repetitionPenalty",
  ],
  [
    "stream_interval 0",
    { streamInterval: 0 },
    "SamplingParams.stream_interval.min",
    "main",
    "streamInterval",
  ],
  [
    "stream_interval -3",
    { streamInterval: -3 },
    "SamplingParams.stream_interval.min",
    "main",
    "streamInterval",
  ],
];

describe("validateRequest(request, { vllmVersion })", () => {
  it.each(BOUNDARIES)("%s %j: %s from v%s on, valid before", (_what, sp, rule, since, field) => {
    for (const v of VLLM_VERSIONS) {
      const error = verdict(sampling(sp), v);
      if (!versionHas(v, since)) {
        expect(error?.message, `${v} must accept`).toBeUndefined();
        continue;
      }
      expect(error, `${v} must refuse`).toBeDefined();
      expect(error!.rule?.id, v).toBe(rule);
      expect(error!.rule?.since, v).toBe(since);
      expect(error!.field, v).toBe(`samplingParams.${field}`);
      expect(error!.vllmVersions, v).toEqual([v]);
      expect(error!.message, v).toContain(`vLLM ${VLLM_VERSION_INFO[since].label} and later]`);
    }
  });

  it.each([
    ["thinking budget -1 (unlimited)", { thinkingTokenBudget: -1 }],
    ["thinking budget 0", { thinkingTokenBudget: 0 }],
    ["temperature 2", { temperature: 2 }],
    ["temperature 0 (greedy)", { temperature: 0 }],
    ["temperature 0.001 (raised to 0.01)", { temperature: 0.001, n: 2 }],
    ["repetition_penalty 1e308", { repetitionPenalty: 1e308 }],
    ["stream_interval 1", { streamInterval: 1 }],
    ["stream_interval null", { streamInterval: null }],
  ])("%s is valid at every version", (_what, sp) => {
    for (const v of VLLM_VERSIONS) expect(verdict(sampling(sp), v)?.message, v).toBeUndefined();
  });

  it.each([
    ["temperature -inf", { temperature: Number.NEGATIVE_INFINITY }, "SamplingParams.temperature.min"],
    [
      "repetition_penalty -inf",
      { repetitionPenalty: Number.NEGATIVE_INFINITY },
      "SamplingParams.repetition_penalty.positive",
    ],
    ["repetition_penalty 0", { repetitionPenalty: 0 }, "SamplingParams.repetition_penalty.positive"],
    ["temperature -0.5", { temperature: -0.5 }, "SamplingParams.temperature.min"],
  ])("%s is refused at every version (the finiteness check comes first from v0.24)", (_what, sp, older) => {
    for (const v of VLLM_VERSIONS) {
      const error = verdict(sampling(sp), v);
      expect(error, v).toBeDefined();
      const expected = versionHas(v, "0.24") && !Number.isFinite(Object.values(sp)[0]) ? /\.finite$/ : older;
      expect(error!.rule?.id, v).toMatch(expected);
    }
  });

  it("several versions: the request must be valid for each (the most restrictive rules)", () => {
    expect(verdict(sampling({ temperature: 2.5 }), ["0.22", "0.23"])).toBeUndefined();
    const error = verdict(sampling({ temperature: 2.5 }), ["0.23", "0.25"]);
    expect(error?.rule?.id).toBe("SamplingParams.temperature.max");
    expect(error?.vllmVersions).toEqual(["0.23", "0.25"]);
    expect(verdict(sampling({ thinkingTokenBudget: -2 }), ["0.22", "0.23"])?.rule?.id).toBe(
      "SamplingParams.thinking_token_budget.min",
    );
    expect(verdict(sampling({ streamInterval: 0 }), ["0.25", "next"])?.rule?.id).toBe(
      "SamplingParams.stream_interval.min",
    );
  });

  it("defaults to the pinned revision; rejects unknown or empty version lists", () => {
    expect(PIN_VERSION).toBe("main");
    expect(verdict(sampling({ streamInterval: 0 }), PIN_VERSION)?.rule?.id).toBe(
      "SamplingParams.stream_interval.min",
    );
    expect(() => validateRequest(sampling({ streamInterval: 0 }))).toThrow(InvalidRequestError);
    expect(() => validateRequest(sampling({}), { vllmVersion: "0.99" as VllmVersion })).toThrow(RangeError);
    expect(() => validateRequest(sampling({}), { vllmVersion: [] })).toThrow(RangeError);
  });

  it("sessionId (main after the pin) must be a str or null wherever it is sent", () => {
    const request = (sessionId: unknown) => ({ ...sampling({}), sessionId }) as CallRequest;
    for (const v of VLLM_VERSIONS) {
      expect(verdict(request("s-1"), v)).toBeUndefined();
      expect(verdict(request(null), v)).toBeUndefined();
      expect(verdict(request(7), v)?.rule?.id).toBe("msgspec.str");
    }
  });
});

describe("the rule table per version", () => {
  it("a rule without `since` applies in every version; one with `since` from that version on", () => {
    for (const rule of REQUEST_RULES.values()) {
      const expected = VLLM_VERSIONS.filter((v) => versionHas(v, rule.since));
      expect(rule.versions, rule.id).toEqual(expected);
      for (const v of VLLM_VERSIONS)
        expect(rulesFor(v).has(rule.id), `${rule.id} @ ${v}`).toBe(versionHas(v, rule.since));
    }
    expect(rulesFor(["0.22", "main"])).toEqual(rulesFor("main"));
  });

  it("the rules that differ per version are exactly these", () => {
    const differing = [...REQUEST_RULES.values()]
      .filter((r) => r.since !== undefined)
      .map((r) => [r.id, r.since, r.change?.pr]);
    expect(differing).toEqual([
      ["SamplingParams.repetition_penalty.finite", "0.24", 45116],
      ["SamplingParams.temperature.finite", "0.24", 45116],
      ["SamplingParams.temperature.max", "0.24", 44965],
      ["SamplingParams.stream_interval.min", "main", 49754],
      ["SamplingParams.thinking_token_budget.min", "0.23", 43402],
      ["PoolingParams.task.removed", "main", 48984],
    ]);
  });

  it("agrees with the protocol's registry of validation changes (WIRE_CHANGES)", () => {
    const validation = WIRE_CHANGES.filter((c) => c.kind === "validation");
    for (const rule of REQUEST_RULES.values()) {
      if (rule.change === undefined) continue;
      const row = validation.find((c) => c.pr === rule.change!.pr);
      if (row === undefined) continue; // not wire-visible (PoolingParams.task.removed: msgspec's Literal check comes first)
      expect(row.since, rule.id).toBe(rule.since);
      expect(row.commit, rule.id).toBe(rule.change.commit);
    }
    // Every registry row about a rule has a rule (the error-class change #49665 is not a rule).
    for (const row of validation) {
      if (row.pr === 49665) continue;
      expect(
        [...REQUEST_RULES.values()].some((r) => r.change?.pr === row.pr),
        `#${row.pr}`,
      ).toBe(true);
    }
  });
});

describe("call() follows the engine's version (mock engine in a child process)", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const hot = (id: string) => ({ ...chatRequest(id, 3), samplingParams: { maxTokens: 3, temperature: 2.5 } });

  it("temperature 2.5 is sent to an engine that registered as vLLM 0.23.0", async () => {
    // surviveBadRequests: whatever the mock makes of it, the test sees the verdict instead of a deaf engine.
    harness = await connectToMockEngine({
      readyResponse: { vllmVersion: "0.23.0" },
      surviveBadRequests: true,
    });
    const { client, engine } = harness;
    const stream = await client.call(hot("hot-023"));
    expect(stream.requestId).toBe("hot-023");
    const seen = await engine.waitForEvent(
      (e) => (e.event === "add" || e.event === "rejected") && e.requestId === "hot-023",
      20_000,
    );
    expect(seen.requestId).toBe("hot-023");
    // streamInterval exists only from main: a 0.23 engine skips the key, so the client sends it unchecked.
    await client.call({ ...chatRequest("si-023", 2), samplingParams: { maxTokens: 2, streamInterval: 0 } });
    await engine.waitForEvent(
      (e) => (e.event === "add" || e.event === "rejected") && e.requestId === "si-023",
      20_000,
    );
  });

  it("and refused for an engine of the pinned main, which would fail to decode it", async () => {
    harness = await connectToMockEngine({ surviveBadRequests: true });
    const { client, engine } = harness;
    const error = await client.call(hot("hot-main")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    const invalid = error as InvalidRequestError;
    expect(invalid.rule?.id).toBe("SamplingParams.temperature.max");
    expect(invalid.rule?.since).toBe("0.24");
    expect(invalid.vllmVersions).toEqual(["main", "next"]); // a development build: main or later
    expect(invalid.message).toContain("vLLM v0.24.0 and later");
    // Nothing reached the engine: the next request is the first it sees.
    await client.call(chatRequest("after", 1));
    await engine.waitForEvent((e) => e.event === "add" && e.requestId === "after", 20_000);
    expect(
      engine.events.filter((e) => e.event === "add" || e.event === "rejected").map((e) => e.requestId),
    ).toEqual(["after"]);
  });

  it("several engines of different versions: a request must be valid for each", async () => {
    // Two mock processes, one engine each: engine 0 registers as 0.23.0, engine 1 as 0.25.1.
    harness = await connectToMixedEngines(["0.23.0", "0.25.1"]);
    const { client } = harness;
    // The 0.25.1 engine would fail to decode 2.5, and either engine may get the request.
    const error = await client.call(hot("mixed")).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as InvalidRequestError).rule?.id).toBe("SamplingParams.temperature.max");
    expect((error as InvalidRequestError).vllmVersions).toEqual(["0.23", "0.25"]);
    // Both have validate_thinking_token_budget; neither has stream_interval.
    await expect(
      client.call({ ...chatRequest("neg", 1), samplingParams: { maxTokens: 1, thinkingTokenBudget: -2 } }),
    ).rejects.toThrow(/thinking_token_budget/);
    const ok = await client.call({
      ...chatRequest("si", 2),
      samplingParams: { maxTokens: 2, streamInterval: 0 },
    });
    expect(ok.requestId).toBe("si");
    await client.abort("si");
  });
});
