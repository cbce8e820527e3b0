import { FinishReason, Float64 } from "@vllm-engine-core/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockEngineProcess, startMockEngine } from "../src/index.js";
import { delay, RawFrontend, request } from "./harness.js";

// One engine process for the whole file (2 workers for collective_rpc); the tests restore any state they change.
let frontend: RawFrontend;
let engine: MockEngineProcess;
beforeAll(async () => {
  frontend = await RawFrontend.create();
  engine = await startMockEngine({
    handshakeAddress: frontend.handshakeAddress,
    stepMs: 5,
    readyResponse: { worldSize: 2 },
  });
  await frontend.connect([0]);
});
afterAll(async () => {
  await engine?.stop();
  await frontend?.close();
});

async function ok(method: string, args: unknown[] = []): Promise<unknown> {
  const out = await frontend.utility(0, method, args);
  expect(out.failureMessage).toBeNull();
  expect(out.result).not.toBeNull();
  expect(out.result!.typeInfo).toBeNull();
  return out.result!.value;
}

async function fails(method: string, args: unknown[] = []): Promise<string> {
  const out = await frontend.utility(0, method, args);
  expect(out.result).toBeNull();
  return out.failureMessage!;
}

describe("utility calls", () => {
  it("replies with a utility-only EngineCoreOutputs carrying the call id, and logs the call", async () => {
    const out = await frontend.utility(0, "is_sleeping");
    const message = (out.received as { outputs: { outputs: unknown[]; engineIndex: number } }).outputs;
    expect(message.outputs).toEqual([]);
    expect(message.engineIndex).toBe(0);
    expect(out.result!.value).toBe(false);
    const event = await engine.waitForEvent((e) => e.event === "utility" && e.method === "is_sleeping");
    expect(event).toMatchObject({ engineIndex: 0, clientIndex: 0 });
    expect(typeof event.callId).toBe("string");
  });

  it("echo returns its arguments; get_supported_tasks; engine_index", async () => {
    expect(await ok("echo", ["hello", 3, [1, 2], { a: 1 }, null])).toEqual([
      "hello",
      3,
      [1, 2],
      { a: 1 },
      null,
    ]);
    expect(await ok("get_supported_tasks")).toEqual(["generate"]);
    expect(await ok("engine_index")).toBe(0);
  });

  it("fails unknown methods with vLLM's exact message", async () => {
    expect(await fails("no_such_method")).toBe(
      "Call to no_such_method method failed: 'EngineCoreProc' object has no attribute 'no_such_method'",
    );
  });

  it("fails bad arities like Python would", async () => {
    expect(await fails("add_lora")).toBe(
      "Call to add_lora method failed: EngineCore.add_lora() missing 1 required positional argument: 'lora_request'",
    );
    // vLLM asserts len(args) <= number of parameters: an AssertionError with no text.
    expect(await fails("is_sleeping", [1])).toBe("Call to is_sleeping method failed: ");
  });

  it("caches: reset_prefix_cache → true when idle, reset_mm_cache / reset_encoder_cache → None", async () => {
    expect(await ok("reset_prefix_cache")).toBe(true);
    expect(await ok("reset_prefix_cache", [true, false])).toBe(true);
    expect(await ok("reset_mm_cache")).toBeNull();
    expect(await ok("reset_encoder_cache")).toBeNull();
  });

  it("reset_prefix_cache → false while requests hold KV blocks (unless reset_running_requests)", async () => {
    await frontend.add(0, request("holder", { maxTokens: 100_000 }));
    await frontend.received.wait(
      (m) => m.kind === "outputs" && m.outputs.outputs.length > 0,
      5_000,
      "output",
    );
    expect(await ok("reset_prefix_cache")).toBe(false);
    expect(await ok("reset_prefix_cache", [true])).toBe(true);
    await frontend.abort(0, ["holder"]);
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds ?? []).includes("holder"));
  });

  it("LoRA: add_lora / list_loras / pin_lora / remove_lora", async () => {
    expect(await ok("add_lora", [["adapter-a", 1, "/loras/a", null, null, false, false]])).toBe(true);
    expect(await ok("add_lora", [["adapter-a", 1, "/loras/a"]])).toBe(false); // already loaded
    expect(await ok("add_lora", [["adapter-b", 2, "/loras/b"]])).toBe(true);
    expect(await ok("list_loras")).toEqual([1, 2]);
    expect(await ok("pin_lora", [2])).toBe(true);
    expect(await fails("pin_lora", [9])).toBe(
      "Call to pin_lora method failed: Pinning failed. LoRA 9 is not registered.",
    );
    expect(await fails("add_lora", [["bad", 0, "/x"]])).toBe(
      "Call to add_lora method failed: id must be > 0, got 0",
    );
    expect(await fails("add_lora", [["bad", 3, ""]])).toBe(
      "Call to add_lora method failed: lora_path cannot be empty",
    );
    expect(await fails("add_lora", [[7, 3, "/x"]])).toBe(
      "Call to add_lora method failed: Expected `str`, got `int` - at `$[0]`",
    );
    expect(await ok("remove_lora", [1])).toBe(true);
    expect(await ok("remove_lora", [1])).toBe(false);
    expect(await ok("remove_lora", [2])).toBe(true);
    expect(await ok("list_loras")).toEqual([]);
  });

  // Every expected text below was produced by running vLLM's _convert_msgspec_args (core.py) and the
  // LoRARequest class (lora/request.py) of c67fe497 under msgspec 0.22.0 on the same decoded arguments.
  it("add_lora converts its argument with msgspec.convert(arg, LoRARequest): array_like, positional", async () => {
    const lora = "Call to add_lora method failed: ";
    // The camelCase / snake_case object forms are what vLLM rejects: LoRARequest is array_like.
    expect(await fails("add_lora", [{ loraName: "a", loraIntId: 1, loraPath: "/p" }])).toBe(
      `${lora}Expected \`array\`, got \`object\``,
    );
    expect(await fails("add_lora", [{ lora_name: "a", lora_int_id: 1, lora_path: "/p" }])).toBe(
      `${lora}Expected \`array\`, got \`object\``,
    );
    const cases: [unknown, string][] = [
      ["adapter", "Expected `array`, got `str`"],
      [null, "Expected `array`, got `null`"],
      [5, "Expected `array`, got `int`"],
      [[], "Expected `array` of at least length 2, got 0"],
      [["a"], "Expected `array` of at least length 2, got 1"],
      [["a", 1], "lora_path cannot be empty"], // the default "" fails the __post_init__ assert
      [["a", 0, "/p"], "id must be > 0, got 0"],
      [["a", -1, ""], "id must be > 0, got -1"],
      [[1, 1, "/p"], "Expected `str`, got `int` - at `$[0]`"],
      [["a", true, "/p"], "Expected `int`, got `bool` - at `$[1]`"],
      [["a", new Float64(1), "/p"], "Expected `int`, got `float` - at `$[1]`"],
      [["a", "1", "/p"], "Expected `int`, got `str` - at `$[1]`"],
      [["a", 1, Uint8Array.of(0x2f)], "Expected `str`, got `bytes` - at `$[2]`"],
      [["a", 1, "/p", 3], "Expected `str | null`, got `int` - at `$[3]`"],
      [["a", 1, "/p", null, []], "Expected `object | null`, got `array` - at `$[4]`"],
      [["a", 1, "/p", null, {}, 1], "Expected `bool`, got `int` - at `$[5]`"],
      [["a", 1, "/p", null, {}, false, null], "Expected `bool`, got `null` - at `$[6]`"],
    ];
    for (const [arg, message] of cases) expect(await fails("add_lora", [arg])).toBe(lora + message);
    // Too many arguments: _convert_msgspec_args's bare assert.
    expect(await fails("add_lora", [["a", 9, "/p"], 2])).toBe(lora);
    // Extra trailing elements are ignored (forbid_unknown_fields is off); every field may be given.
    expect(await ok("add_lora", [["extra", 9, "/p", null, null, false, false, "x", 5]])).toBe(true);
    expect(await ok("add_lora", [["full", 10, "/q", "base", { k: 1 }, true, true]])).toBe(true);
    expect(await ok("remove_lora", [9])).toBe(true);
    expect(await ok("remove_lora", [10])).toBe(true);
  });

  it("other parameters are not converted: the method body fails on them as Python would", async () => {
    expect(await fails("remove_lora", ["x"])).toBe(
      "Call to remove_lora method failed: '>' not supported between instances of 'str' and 'int'",
    );
    expect(await fails("remove_lora", [0])).toBe(
      "Call to remove_lora method failed: lora_id must be greater than 0.",
    );
    expect(await fails("pin_lora", [-3])).toBe(
      "Call to pin_lora method failed: lora_id must be greater than 0.",
    );
    expect(await fails("sleep", ["deep"])).toBe(
      "Call to sleep method failed: '>=' not supported between instances of 'str' and 'int'",
    );
    expect(await fails("sleep", [1, "later"])).toBe("Call to sleep method failed: Invalid pause mode: later");
    expect(await fails("pause_scheduler", [["abort"]])).toBe(
      "Call to pause_scheduler method failed: Invalid pause mode: ['abort']",
    );
    expect(await fails("wake_up", [5])).toBe(
      "Call to wake_up method failed: argument of type 'int' is not iterable",
    );
    expect(await fails("save_sharded_state")).toBe(
      "Call to save_sharded_state method failed: EngineCore.save_sharded_state() missing 1 required positional argument: 'path'",
    );
    expect(await fails("collective_rpc")).toBe(
      "Call to collective_rpc method failed: EngineCore.collective_rpc() missing 1 required positional argument: 'method'",
    );
    expect(await fails("pause_scheduler", ["abort", true, 1])).toBe(
      "Call to pause_scheduler method failed: ",
    );
    expect(await ok("save_sharded_state", ["/ckpt", "model-*.safetensors", 1_000_000])).toBeNull();
  });

  it("collective_rpc returns one entry per worker", async () => {
    expect(await ok("collective_rpc", ["echo", null, [1, "x"], {}])).toEqual([
      [1, "x"],
      [1, "x"],
    ]);
    expect(await ok("collective_rpc", ["rank"])).toEqual([0, 1]);
    expect(await fails("collective_rpc", ["nope"])).toBe(
      "Call to collective_rpc method failed: Method 'nope' is not implemented.",
    );
  });

  it("profile, execute_dummy_batch, weight version", async () => {
    expect(await ok("profile", [true])).toBeNull();
    expect(await ok("profile", [false, "run-1"])).toBeNull();
    expect(await ok("execute_dummy_batch")).toBeNull();
    expect(await ok("get_weight_version")).toBe("default");
    expect(await ok("set_weight_version", ["v2"])).toBeNull();
    expect(await ok("get_weight_version")).toBe("v2");
  });

  it("pause_scheduler(abort) sends ABORT terminal outputs with finished_requests; resume_scheduler restarts", async () => {
    await frontend.add(0, request("p1", { maxTokens: 100_000 }));
    await frontend.add(0, request("p2", { maxTokens: 100_000 }));
    await frontend.received.wait(
      (m) => m.kind === "outputs" && m.outputs.outputs.some((o) => o.requestId === "p2"),
      5_000,
      "p2 output",
    );
    expect(await ok("pause_scheduler", ["abort", true])).toBeNull();
    const p1 = await frontend.finished("p1");
    const p2 = await frontend.finished("p2");
    expect(p1.last.finishReason).toBe(FinishReason.ABORT);
    expect(p1.last.newTokenIds).toEqual([]);
    expect(p2.last.finishReason).toBe(FinishReason.ABORT);
    const terminal = p1.messages.at(-1)!;
    expect(terminal.finishedRequests).toEqual(["p1", "p2"]);
    expect(terminal.outputs.map((o) => o.requestId)).toEqual(["p1", "p2"]);
    expect(await ok("is_scheduler_paused")).toBe(true);
    expect(await ok("is_sleeping")).toBe(true);

    // Paused: a new request is queued, not scheduled.
    await frontend.add(0, request("queued", { maxTokens: 3 }));
    await delay(60);
    expect(frontend.outputsFor("queued")).toHaveLength(0);
    expect(await ok("resume_scheduler")).toBeNull();
    expect(await ok("is_scheduler_paused")).toBe(false);
    expect((await frontend.finished("queued")).tokens).toHaveLength(3);
  });

  it("pause_scheduler(wait) replies only once running requests have drained", async () => {
    await frontend.add(0, request("drain", { maxTokens: 10 }));
    await frontend.received.wait(
      (m) => m.kind === "outputs" && m.outputs.outputs.some((o) => o.requestId === "drain"),
      5_000,
      "drain output",
    );
    const reply = await frontend.utility(0, "pause_scheduler", ["wait", false]);
    expect(reply.failureMessage).toBeNull();
    const drained = await frontend.finished("drain");
    expect(drained.last.finishReason).toBe(FinishReason.LENGTH);
    expect(drained.tokens).toHaveLength(10);
    // The reply came after the last output of the drained request.
    const replyIndex = frontend.received.items.indexOf(reply.received);
    const lastOutputIndex = frontend.received.items.findIndex(
      (m) =>
        m.kind === "outputs" &&
        m.outputs.outputs.some((o) => o.requestId === "drain" && o.finishReason !== null),
    );
    expect(replyIndex).toBeGreaterThan(lastOutputIndex);
    expect(await ok("resume_scheduler")).toBeNull();
  });

  it("rejects an invalid pause mode with vLLM's message", async () => {
    expect(await fails("pause_scheduler", ["later"])).toBe(
      "Call to pause_scheduler method failed: Invalid pause mode: later",
    );
  });

  it("sleep / is_sleeping / wake_up (levels, tags)", async () => {
    expect(await ok("sleep", [1])).toBeNull();
    expect(await ok("is_sleeping")).toBe(true);
    expect(await ok("is_scheduler_paused")).toBe(true);
    expect(await ok("wake_up", [["weights"]])).toBeNull();
    expect(await ok("is_sleeping")).toBe(true); // kv_cache still asleep
    expect(await ok("wake_up", [["kv_cache"]])).toBeNull();
    expect(await ok("is_sleeping")).toBe(false);
    expect(await ok("is_scheduler_paused")).toBe(false);

    expect(await ok("sleep", [0, "keep"])).toBeNull(); // level 0: scheduling only
    expect(await ok("is_sleeping")).toBe(true);
    expect(await ok("wake_up", [["scheduling"]])).toBeNull();
    expect(await ok("is_sleeping")).toBe(false);

    expect(await ok("sleep")).toBeNull();
    expect(await ok("wake_up")).toBeNull();
    expect(await ok("is_sleeping")).toBe(false);
  });
});
