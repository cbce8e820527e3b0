// The mock's model of vLLM's ADD decode (src/validation, written from vllm/sampling_params.py,
// vllm/lora/request.py, vllm/pooling_params.py, vllm/v1/serial_utils.py and msgspec's rules), and the
// engine's reaction to a failure: deaf, as vLLM's input thread dies, or --survive-bad-requests.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { encodeValue, Float64, MsgpackExt, RequestType } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  mockEngineMainPath,
  startMockEngine,
  toArgv,
} from "../src/index.js";
import { decodeEngineCoreRequest, PythonError } from "../src/validation/index.js";
import { delay, RawFrontend } from "./harness.js";

/** An EngineCoreRequest as its 20-element wire array (snake_case), sampling params as a map. */
function wire(sp: Record<string, unknown> | null = {}, extra: Record<number, unknown> = {}): unknown[] {
  const arr: unknown[] = [
    "r",
    [1, 2, 3],
    null,
    sp === null ? null : { max_tokens: 8, ...sp },
    null,
    new Float64(1_700_000_000),
    null,
    null,
    null,
    null,
    null,
    0,
    0,
    0,
    null,
    false,
    null,
    null,
    null,
    false,
  ];
  for (const [i, v] of Object.entries(extra)) arr[Number(i)] = v;
  return arr;
}

const decode = (value: unknown, aux: Uint8Array[] = []) =>
  decodeEngineCoreRequest([encodeValue(value), ...aux]);

function failure(value: unknown): PythonError {
  try {
    decode(value);
  } catch (error) {
    expect(error).toBeInstanceOf(PythonError);
    return error as PythonError;
  }
  throw new Error("decoded without error");
}

describe("decodeEngineCoreRequest (vLLM's decode, in the mock)", () => {
  it("decodes a valid request and runs SamplingParams.__post_init__'s normalisations", () => {
    const r = decode(
      wire({ stop: "x", seed: -1, thinking_token_budget: -1, temperature: new Float64(0.001) }),
    );
    const sp = r.sampling_params!;
    expect(sp.stop).toEqual(["x"]);
    expect(sp.seed).toBeNull();
    expect(sp.thinking_token_budget).toBeNull();
    expect(sp.temperature).toBe(0.01);
    expect(sp.stop_token_ids).toEqual([]);
    expect(sp.max_tokens).toBe(8n);
    // An int where a float is declared is accepted (msgspec widens it).
    expect(decode(wire({ temperature: 2 })).sampling_params!.temperature).toBe(2);
  });

  it.each([
    [
      { temperature: new Float64(2.5) },
      "vllm.exceptions.VLLMValidationError",
      "temperature must be in [0, 2], got 2.5.",
    ],
    [
      { n: 2, temperature: 0 },
      "vllm.exceptions.VLLMValidationError",
      "n must be 1 when using greedy sampling, got 2.",
    ],
    [{ stop: ["a", ""] }, "vllm.exceptions.VLLMValidationError", "stop cannot contain an empty string."],
    [
      { max_tokens: undefined, min_tokens: 17 },
      "vllm.exceptions.VLLMValidationError",
      "min_tokens must be less than or equal to max_tokens=16",
    ],
    [{ n: 16385 }, "vllm.exceptions.VLLMValidationError", "n must be at most 16384"],
    [
      { top_k: -2 },
      "vllm.exceptions.VLLMValidationError",
      "top_k must be 0 (disable), or at least 1, got -2.",
    ],
    [{ top_p: 0 }, "vllm.exceptions.VLLMValidationError", "top_p must be in (0, 1], got 0."],
    [{ thinking_token_budget: -2 }, "vllm.exceptions.VLLMValidationError", "`thinking_token_budget` must be"],
    [{ stream_interval: 0 }, "vllm.exceptions.VLLMValidationError", "stream_interval must be at least 1"],
    [
      { max_tokens: new Float64(16) },
      "msgspec.ValidationError",
      "Expected `int`, got `float` - at `$[3].max_tokens`",
    ],
    [{ top_k: true }, "msgspec.ValidationError", "Expected `int`, got `bool` - at `$[3].top_k`"],
    [{ logit_bias: { "1": 0.5 } }, "msgspec.ValidationError", "Expected `int`, got `str`"],
    [{ output_kind: 3 }, "msgspec.ValidationError", "Invalid enum value 3 - at `$[3].output_kind`"],
    [
      { extra_args: { x: new MsgpackExt(2, Uint8Array.of(1)) } },
      "NotImplementedError",
      "Extension type code 2 is not supported",
    ],
    [
      { structured_outputs: { json: "{}", regex: "a" } },
      "vllm.exceptions.VLLMValidationError",
      "You can only use one kind",
    ],
    [{ structured_outputs: {} }, "vllm.exceptions.VLLMValidationError", "You must use one kind"],
    [
      { repetition_detection: { max_pattern_size: 2, min_count: 1 } },
      "vllm.exceptions.VLLMValidationError",
      "min_count must be >= 2",
    ],
  ])("sampling params %o → %s", (sp, type, text) => {
    const error = failure(wire(sp));
    expect(error.type).toBe(type);
    expect(error.text).toContain(text);
  });

  it.each([
    [{ 6: ["a", 0, "/p"] }, "msgspec.ValidationError", "id must be > 0, got 0 - at `$[6]`"],
    [{ 6: ["a", 1] }, "AssertionError", "lora_path cannot be empty"],
    [
      { 6: { lora_name: "a", lora_int_id: 1, lora_path: "/p" } },
      "msgspec.ValidationError",
      "Expected `array`, got `object` - at `$[6]`",
    ],
    [{ 6: ["a"] }, "msgspec.ValidationError", "Expected `array` of at least length 2, got 1"],
    [
      { 3: null, 4: [null, null, null, null, "score"] },
      "msgspec.ValidationError",
      "Invalid enum value 'score'",
    ],
    [
      { 3: null, 4: [null, null, null, null, "embed", false, null, null, null, 0] },
      "vllm.exceptions.VLLMValidationError",
      "For pooling output_kind has to be FINAL_ONLY",
    ],
    [{ 0: 7 }, "msgspec.ValidationError", "Expected `str`, got `int` - at `$[0]`"],
    [{ 5: "now" }, "msgspec.ValidationError", "Expected `float`, got `str` - at `$[5]`"],
    [{ 13: 1.5 }, "msgspec.ValidationError", "Expected `int`, got `float` - at `$[13]`"],
    [
      { 9: ["<f4", [1], new MsgpackExt(3, new Uint8Array(4))] },
      "AttributeError",
      "module 'torch' has no attribute '<f4'",
    ],
    [
      { 9: ["float32", [2], new MsgpackExt(3, new Uint8Array(4))] },
      "RuntimeError",
      "is invalid for input of size 1",
    ],
  ])("request fields %o → %s", (extra, type, text) => {
    const error = failure(wire({}, extra));
    expect(error.type).toBe(type);
    expect(error.text).toContain(text);
  });

  it("a request shorter than its 9 required fields, or not an array, fails", () => {
    expect(failure(["r", [1]]).text).toContain("Expected `array` of at least length 9, got 2");
    expect(failure({ request_id: "r" }).text).toContain("Expected `array`, got `object`");
  });

  it("multimodal features go through dec_hook's rebuild of each field", () => {
    const feature = (field: unknown, data: unknown = 1) => ({
      data: { pixel_values: { data, field } },
      modality: "image",
      identifier: "i",
      mm_position: { offset: 0, length: 1 },
      mm_hash: null,
    });
    expect(() => decode(wire({}, { 2: [feature(["batched", { keep_on_cpu: false }])] }))).not.toThrow();
    expect(() => decode(wire({}, { 2: [feature(["flat", { slices: [[0, 1]], dim: 0 }])] }))).not.toThrow();
    expect(failure(wire({}, { 2: [feature(["flat_from_sizes", {}])] })).type).toBe("AttributeError");
    expect(failure(wire({}, { 2: [feature(["shared", {}])] })).text).toContain(
      "missing 1 required positional argument: 'batch_size'",
    );
    expect(failure(wire({}, { 2: [feature(["batched", {}], "x")] })).text).toContain(
      "Unexpected NestedTensors contents",
    );
    expect(failure(wire({}, { 2: [{ modality: "image" }] })).text).toContain(
      "Object missing required field `data`",
    );
    // A tensor's bytes may sit in an aux frame (index 1 = first frame after the payload).
    const aux = new Uint8Array(8);
    expect(() =>
      decode(wire({}, { 2: [feature(["batched", {}], ["float32", [2], 1])] }), [aux]),
    ).not.toThrow();
    expect(() => decode(wire({}, { 2: [feature(["batched", {}], ["float32", [2], 2])] }), [aux])).toThrow(
      /IndexError/,
    );
  });
});

// ---- the engine's reaction, over real sockets ----

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  // The raw frontend's ipc files (RawFrontend.close leaves them).
  for (const address of [
    frontend?.handshakeAddress,
    ...(frontend?.inputAddresses ?? []),
    ...(frontend?.outputAddresses ?? []),
  ]) {
    if (address?.startsWith("ipc://")) rmSync(address.slice("ipc://".length), { force: true });
  }
  engine = undefined;
  frontend = undefined;
});

async function setup(options: Partial<MockEngineOptions> = {}) {
  frontend = await RawFrontend.create();
  engine = await startMockEngine({
    stepMs: 2,
    ...options,
    mode: "bootstrapped",
    ...frontend.bootstrapAddresses,
  });
  await frontend.awaitRegistrations(0);
  return { frontend, engine };
}

const addFrames = (value: unknown) => [Uint8Array.of(RequestType.ADD), encodeValue(value)];

describe("a request the engine cannot decode", () => {
  it("makes the engine deaf, as vLLM: the next request is never answered", async () => {
    const { frontend, engine } = await setup();
    await frontend.sendRaw(0, addFrames(wire({ temperature: new Float64(2.5) })));
    const fault = await engine.waitForEvent((e) => e.event === "fault" && e.kind === "input-thread-died");
    expect(String(fault.detail)).toBe(
      "vllm.exceptions.VLLMValidationError: temperature must be in [0, 2], got 2.5. (parameter=temperature, value=2.5)",
    );
    const good = wire({ max_tokens: 2 });
    good[0] = "after";
    await frontend.sendRaw(0, addFrames(good));
    const answered = await Promise.race([
      frontend.finished("after", 1_500).then(() => true),
      delay(1_000).then(() => false),
    ]);
    expect(answered, "a deaf engine must not serve the next request").toBe(false);
  });

  it("--survive-bad-requests logs each rejection with its verdict and keeps serving", async () => {
    const { frontend, engine } = await setup({ surviveBadRequests: true });
    const cases: [string, unknown[]][] = [
      ["temp", wire({ temperature: new Float64(2.5) })],
      ["greedy-n", wire({ n: 2, temperature: 0 })],
      ["empty-stop", wire({ stop: [""] })],
      ["two-kinds", wire({ structured_outputs: { choice: ["a"], grammar: "g" } })],
      ["lora-id", wire({}, { 6: ["a", 0, "/p"] })],
      ["lora-path", wire({}, { 6: ["a", 1, ""] })],
    ];
    for (const [id, value] of cases) {
      value[0] = id;
      await frontend.sendRaw(0, addFrames(value));
    }
    const ok = wire({ max_tokens: 3 });
    ok[0] = "ok";
    await frontend.sendRaw(0, addFrames(ok));
    expect((await frontend.finished("ok")).tokens).toHaveLength(3);
    const rejected = engine.events.filter((e) => e.event === "rejected");
    expect(rejected.map((e) => e.requestId)).toEqual(cases.map(([id]) => id));
    expect(rejected.map((e) => e.count)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rejected.map((e) => e.errorType)).toEqual([
      "vllm.exceptions.VLLMValidationError",
      "vllm.exceptions.VLLMValidationError",
      "vllm.exceptions.VLLMValidationError",
      "vllm.exceptions.VLLMValidationError",
      "msgspec.ValidationError",
      "AssertionError",
    ]);
    expect(engine.events.some((e) => e.event === "fault" && e.kind === "input-thread-died")).toBe(false);
    expect(engine.events.filter((e) => e.event === "add").map((e) => e.requestId)).toEqual(["ok"]);
  });

  it("prints the exception on stderr as Python's thread traceback", async () => {
    frontend = await RawFrontend.create();
    const child = spawn(
      process.execPath,
      [mockEngineMainPath(), ...toArgv({ mode: "bootstrapped", ...frontend.bootstrapAddresses })],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    try {
      await frontend.awaitRegistrations(0);
      await frontend.sendRaw(0, addFrames(wire({}, { 6: ["adapter", 1, ""] })));
      const deadline = Date.now() + 10_000;
      while (!stderr.includes("AssertionError") && Date.now() < deadline) await delay(20);
      expect(stderr).toContain("Exception in thread Thread-1 (process_input_sockets):");
      expect(stderr).toContain("Traceback (most recent call last):");
      expect(stderr).toMatch(/\(EngineCore_DP0 pid=\d+\) AssertionError: lora_path cannot be empty\n/);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });
});
