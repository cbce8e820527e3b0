// --vllm-version: the mock plays v0.22.1, v0.23.0, v0.24.0, v0.25.1 or the pin. Expectations are written
// from each tag's vLLM code (vllm/v1/engine/__init__.py, core.py, sampling_params.py, exceptions.py,
// v1/metrics/stats.py), not computed from the registry the mock reads, so a wrong registry entry fails here.
import { compatibilityTable, decodeValue, encodeValue, Float64 } from "@vllm-engine-core/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockEngineOptions, type MockEngineProcess, startMockEngine } from "../src/index.js";
import { parseArgv, resolveOptions, toArgv } from "../src/options.js";
import { REGISTRATION_KEYS } from "../src/ready-response.js";
import { decodeEngineCoreRequest, PythonError } from "../src/validation/index.js";
import { decodeRulesFor, MOCK_VLLM_VERSIONS, type MockVllmVersion } from "../src/versions.js";
import { RawFrontend, request } from "./harness.js";

const RELEASES = ["0.22", "0.23", "0.24", "0.25"] as const;

/** An EngineCoreRequest as its 20-element wire array with these sampling params (snake_case map). */
function wire(sp: Record<string, unknown>): Uint8Array[] {
  const head: unknown[] = ["r", [1, 2, 3], null, { max_tokens: 8, ...sp }, null, new Float64(1.7e9)];
  const tail: unknown[] = [null, null, null, null, null, 0, 0, 0, null, false, null, null, null, false];
  return [encodeValue([...head, ...tail])];
}

function decodeAt(version: MockVllmVersion, sp: Record<string, unknown>) {
  return decodeEngineCoreRequest(wire(sp), decodeRulesFor(version));
}

/** The Python exception `type: text` the decode dies of in `version`, or "ok". */
function verdict(version: MockVllmVersion, sp: Record<string, unknown>): string {
  try {
    decodeAt(version, sp);
    return "ok";
  } catch (error) {
    if (!(error instanceof PythonError)) throw error;
    return error.message;
  }
}

/** Up to v0.25 msgspec wraps the (ValueError) VLLMValidationError with SamplingParams' path; main does not. */
function rejected(version: MockVllmVersion, text: string): string {
  return version === "main"
    ? `vllm.exceptions.VLLMValidationError: ${text}`
    : `msgspec.ValidationError: ${text} - at \`$[3]\``;
}

describe("decode-time validation per version (SamplingParams.__post_init__ at each tag)", () => {
  it("temperature above 2 or not finite fails only from v0.24 (ebb0a71a)", () => {
    const above = "temperature must be in [0, 2], got 2.5. (parameter=temperature, value=2.5)";
    const inf = "temperature must be a finite number, got inf. (parameter=temperature, value=inf)";
    for (const v of MOCK_VLLM_VERSIONS) {
      const bounded = v !== "0.22" && v !== "0.23";
      expect(verdict(v, { temperature: new Float64(2.5) }), v).toBe(bounded ? rejected(v, above) : "ok");
      expect(verdict(v, { temperature: new Float64(Infinity) }), v).toBe(bounded ? rejected(v, inf) : "ok");
      expect(verdict(v, { repetition_penalty: new Float64(Infinity) }), v).toBe(
        bounded ? rejected(v, "repetition_penalty must be a finite number, got inf.") : "ok",
      );
    }
    expect(decodeAt("0.23", { temperature: new Float64(3) }).sampling_params!.temperature).toBe(3);
  });

  it("thinking_token_budget: v0.22 keeps any int; from v0.23 -1 → None and other negatives fail", () => {
    expect(decodeAt("0.22", { thinking_token_budget: -1 }).sampling_params!.thinking_token_budget).toBe(-1n);
    expect(decodeAt("0.22", { thinking_token_budget: -5 }).sampling_params!.thinking_token_budget).toBe(-5n);
    const text =
      "`thinking_token_budget` must be a non-negative integer or -1 for unlimited. (parameter=thinking_token_budget, value=-5)";
    for (const v of ["0.23", "0.24", "0.25", "main"] as const) {
      expect(decodeAt(v, { thinking_token_budget: -1 }).sampling_params!.thinking_token_budget, v).toBeNull();
      expect(decodeAt(v, { thinking_token_budget: 7 }).sampling_params!.thinking_token_budget, v).toBe(7n);
      expect(verdict(v, { thinking_token_budget: -5 }), v).toBe(rejected(v, text));
    }
  });

  it("stream_interval exists only at main: older engines skip the unknown key, whatever its value", () => {
    for (const v of RELEASES) {
      expect(verdict(v, { stream_interval: 0 }), v).toBe("ok");
      expect(verdict(v, { stream_interval: "not an int" }), v).toBe("ok");
      expect(decodeAt(v, { stream_interval: 4 }).sampling_params).not.toHaveProperty("stream_interval");
    }
    expect(verdict("main", { stream_interval: 0 })).toBe(
      rejected("main", "stream_interval must be at least 1, got 0. (parameter=stream_interval, value=0)"),
    );
    expect(verdict("main", { stream_interval: "x" })).toMatch(
      /^msgspec\.ValidationError: Expected `int.*`, got `str` - at `\$\[3\]\.stream_interval`$/,
    );
    expect(decodeAt("main", { stream_interval: 4 }).sampling_params!.stream_interval).toBe(4n);
  });

  it("a check every version has fails as msgspec.ValidationError up to v0.25, as VLLMValidationError at main", () => {
    for (const v of MOCK_VLLM_VERSIONS) {
      expect(verdict(v, { n: 0 }), v).toBe(rejected(v, "n must be at least 1, got 0."));
      expect(verdict(v, { top_p: new Float64(0) }), v).toBe(
        rejected(v, "top_p must be in (0, 1], got 0.0. (parameter=top_p, value=0.0)"),
      );
    }
    // A nested dataclass's __post_init__ is wrapped at its own path.
    const both = { structured_outputs: { regex: "a", grammar: "b" } };
    expect(verdict("0.24", both)).toMatch(
      /^msgspec\.ValidationError: You can only use one kind of structured outputs constraint .* - at `\$\[3\]\.structured_outputs`$/,
    );
    expect(verdict("main", both)).toMatch(
      /^vllm\.exceptions\.VLLMValidationError: You can only use one kind/,
    );
  });
});

describe("options", () => {
  it("--vllm-version and --log-stats round-trip; the default is the pin; other ids are refused", () => {
    const options: MockEngineOptions = { handshakeAddress: "x", vllmVersion: "0.24", logStats: true };
    expect(toArgv(options)).toEqual(["--handshake", "x", "--vllm-version", "0.24", "--log-stats"]);
    expect(parseArgv(toArgv(options))).toEqual(options);
    expect(resolveOptions({ handshakeAddress: "x" })).toMatchObject({ vllmVersion: "main", logStats: false });
    for (const bad of ["next", "0.21", "v0.24", "0.24.0"]) {
      expect(() => resolveOptions({ handshakeAddress: "x", vllmVersion: bad as MockVllmVersion })).toThrow(
        /vllmVersion must be one of 0\.22, 0\.23, 0\.24, 0\.25, main/,
      );
    }
  });

  it("the registration key lists written from vLLM's dataclasses agree with the codec's field tables", () => {
    const row = compatibilityTable().rows.find((r) => r.feature === "EngineCoreReadyResponse: map keys")!;
    expect(MOCK_VLLM_VERSIONS.map((v) => REGISTRATION_KEYS[v].length)).toEqual([4, 6, 10, 10, 18]);
    expect(MOCK_VLLM_VERSIONS.map((v) => String(REGISTRATION_KEYS[v].length))).toEqual(row.cells.slice(0, 5));
  });
});

/** Raw msgpack view of a message (maps as objects), to check layouts without the codec's version logic. */
function raw(frame: Uint8Array): unknown {
  return decodeValue(frame);
}

// The key sets below are the dataclasses' fields in declaration order (msgspec writes a dataclass's
// fields in that order) at each tag: vllm/v1/engine/__init__.py, vllm/v1/metrics/stats.py.
const REGISTRATION: Record<MockVllmVersion, string[]> = {
  "0.22": ["max_model_len", "num_gpu_blocks", "dp_stats_address", "dtype"],
  "0.23": ["max_model_len", "num_gpu_blocks", "block_size", "dp_stats_address", "dtype", "vllm_version"],
  "0.24": [
    ...["max_model_len", "num_gpu_blocks", "block_size", "dp_stats_address", "dtype", "vllm_version"],
    ...["world_size", "data_parallel_size", "kv_cache_size_tokens", "kv_cache_max_concurrency"],
  ],
  "0.25": [
    ...["max_model_len", "num_gpu_blocks", "block_size", "dp_stats_address", "dtype", "vllm_version"],
    ...["world_size", "data_parallel_size", "kv_cache_size_tokens", "kv_cache_max_concurrency"],
  ],
  main: [
    ...["max_model_len", "num_gpu_blocks", "block_size", "dp_stats_address", "dtype", "vllm_version"],
    ...["world_size", "data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size"],
    ...["decode_context_parallel_size", "data_parallel_rank", "max_num_seqs", "max_num_batched_tokens"],
    ...["instance_id", "kv_cache_size_tokens", "kv_cache_max_concurrency", "kv_events_config"],
  ],
};
const PREFILL = [
  "num_prompt_tokens",
  "num_computed_tokens",
  "num_cached_tokens",
  "num_local_cached_tokens",
  "num_external_cached_tokens",
];
const SCHEDULER_STATS = [
  "num_running_reqs",
  "num_waiting_reqs",
  "num_skipped_waiting_reqs",
  "step_counter",
  "current_wave",
  "kv_cache_usage",
  "prefix_cache_stats",
  "connector_prefix_cache_stats",
  "kv_cache_eviction_events",
  "spec_decoding_stats",
  "kv_connector_stats",
  "waiting_lora_adapters",
  "running_lora_adapters",
  "cudagraph_stats",
  "perf_stats",
];

// One engine process per version for the whole block, started together.
const engines = new Map<MockVllmVersion, { frontend: RawFrontend; engine: MockEngineProcess }>();
beforeAll(async () => {
  await Promise.all(
    MOCK_VLLM_VERSIONS.map(async (vllmVersion) => {
      const frontend = await RawFrontend.create();
      const engine = await startMockEngine({
        handshakeAddress: frontend.handshakeAddress,
        stepMs: 2,
        vllmVersion,
        logStats: true,
        surviveBadRequests: true,
      });
      engines.set(vllmVersion, { frontend, engine });
      await frontend.connect([0]);
    }),
  );
});
afterAll(async () => {
  await Promise.all([...engines.values()].map(({ engine }) => engine.stop()));
  await Promise.all([...engines.values()].map(({ frontend }) => frontend.close()));
});

describe.each(MOCK_VLLM_VERSIONS)("the engine plays vLLM %s", (version) => {
  const at = () => engines.get(version)!;
  const isRelease = version !== "main";

  it("registers with that version's EngineCoreReadyResponse keys and vllm_version", async () => {
    const { frontend } = at();
    const registration = frontend.registrations.items[0]!;
    const keys = Object.keys(raw(registration.frames[1]!) as object);
    expect(keys).toEqual(REGISTRATION[version]);
    const reported = (raw(registration.frames[1]!) as Record<string, unknown>).vllm_version;
    const expected = { "0.22": undefined, "0.23": "0.23.0", "0.24": "0.24.0", "0.25": "0.25.1" } as const;
    if (isRelease) expect(reported).toBe(expected[version as keyof typeof expected]);
    else expect(reported).toMatch(/^0\.26\.0\.dev/);
    // fixmap up to 15 keys, map16 for the pin's 18 (msgspec's header follows the field count)
    expect(registration.frames[1]![0]).toBe(version === "main" ? 0xde : 0x80 + keys.length);
  });

  it("sends 13-element EngineCoreOutputs before main, 14 at main; PrefillStats on the first output; SchedulerStats per step", async () => {
    const { frontend } = at();
    await frontend.add(0, request(`layout-${version}`, { maxTokens: 3 }));
    const { messages } = await frontend.finished(`layout-${version}`);
    expect(messages).toHaveLength(3);
    const frames = frontend.received.items.filter(
      (m) => m.kind === "outputs" && m.outputs.outputs.some((o) => o.requestId === `layout-${version}`),
    );
    const width = isRelease ? 13 : 14;
    const prefillAt = isRelease ? 10 : 11;
    frames.forEach((m, step) => {
      const outputs = raw(m.frames[0]!) as unknown[];
      const output = (outputs[1] as unknown[][])[0]!;
      expect(output).toHaveLength(width);
      expect(output[width - 1]).toBe(0); // num_nans_in_logits, the last element in every layout
      const prefill = output[prefillAt] as Record<string, unknown> | null;
      if (step === 0) {
        expect(Object.keys(prefill!)).toEqual(
          isRelease ? PREFILL : [...PREFILL, "num_cache_creation_tokens"],
        );
        expect(prefill).toMatchObject({ num_prompt_tokens: 3, num_computed_tokens: 3, num_cached_tokens: 0 });
        if (!isRelease) expect(prefill!.num_cache_creation_tokens).toBe(0); // 3 tokens: no full 16-token block
      } else {
        expect(prefill).toBeNull();
      }
      const stats = outputs[2] as Record<string, unknown>;
      expect(Object.keys(stats)).toEqual(
        isRelease
          ? SCHEDULER_STATS
          : [...SCHEDULER_STATS.slice(0, 6), "iteration_details", ...SCHEDULER_STATS.slice(6)],
      );
      expect(stats.num_running_reqs).toBe(step < 2 ? 1 : 0);
      expect(stats.prefix_cache_stats).toMatchObject({
        requests: step === 0 ? 1 : 0,
        queries: step === 0 ? 3 : 0,
      });
      // The codec reads the same message in that layout.
      const decoded = (m as { outputs: { outputs: { prefillStats: unknown }[]; schedulerStats: unknown } })
        .outputs;
      expect(decoded.schedulerStats).not.toBeNull();
      if (step === 0) expect(decoded.outputs[0]!.prefillStats).toMatchObject({ numPromptTokens: 3 });
    });
  });

  it("has that version's utility methods: get/set_weight_version only at main", async () => {
    const { frontend } = at();
    const get = await frontend.utility(0, "get_weight_version");
    const set = await frontend.utility(0, "set_weight_version", ["v2"]);
    if (isRelease) {
      expect(get.failureMessage).toBe(
        "Call to get_weight_version method failed: 'EngineCoreProc' object has no attribute 'get_weight_version'",
      );
      expect(set.failureMessage).toBe(
        "Call to set_weight_version method failed: 'EngineCoreProc' object has no attribute 'set_weight_version'",
      );
    } else {
      expect(get.result!.value).toBe("default");
      expect(set.failureMessage).toBeNull();
      expect((await frontend.utility(0, "get_weight_version")).result!.value).toBe("v2");
    }
    expect((await frontend.utility(0, "get_supported_tasks")).result!.value).toEqual(["generate"]);
  });

  it("partial wake_up(tags) resumes the scheduler before v0.24 and keeps it paused from v0.24", async () => {
    const { frontend } = at();
    const value = async (method: string, args: unknown[] = []) => {
      const out = await frontend.utility(0, method, args);
      expect(out.failureMessage).toBeNull();
      return out.result!.value;
    };
    expect(await value("sleep", [1])).toBeNull();
    expect(await value("is_scheduler_paused")).toBe(true);
    expect(await value("wake_up", [["weights"]])).toBeNull();
    const keepsPaused = version !== "0.22" && version !== "0.23";
    expect(await value("is_scheduler_paused")).toBe(keepsPaused);
    expect(await value("is_sleeping")).toBe(true); // kv_cache is still asleep either way
    expect(await value("wake_up", [["kv_cache"]])).toBeNull();
    expect(await value("is_scheduler_paused")).toBe(false);
    expect(await value("is_sleeping")).toBe(false);
  });

  it("validates ADDs as that version decodes them (temperature 2.5 is fine before v0.24)", async () => {
    const { frontend, engine } = at();
    await frontend.add(0, request(`hot-${version}`, { maxTokens: 2, temperature: 2.5 }));
    await frontend.add(0, request(`after-${version}`, { maxTokens: 2 }));
    await frontend.finished(`after-${version}`);
    const rejectedEvent = engine.events.find(
      (e) => e.event === "rejected" && e.requestId === `hot-${version}`,
    );
    if (version === "0.22" || version === "0.23") {
      expect(rejectedEvent).toBeUndefined();
      expect((await frontend.finished(`hot-${version}`)).tokens).toHaveLength(2);
    } else {
      expect(rejectedEvent).toMatchObject({
        errorType: version === "main" ? "vllm.exceptions.VLLMValidationError" : "msgspec.ValidationError",
      });
    }
  });
});
