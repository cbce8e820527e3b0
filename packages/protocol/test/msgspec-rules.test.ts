// msgspec semantics the codec implements (see README "msgspec rules"), one rule per test.
import { describe, expect, it } from "vitest";
import {
  type EngineCoreRequest,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  encodeUtilityCall,
  encodeValue,
  Float64,
  MsgpackExt,
  ProtocolError,
  resolveSamplingParams,
  type SamplingParamsInit,
} from "../src/index.js";
import {
  decodeEngineCoreOutputs,
  decodeInputMessage,
  decodeReadyResponse,
  decodeValue,
} from "./helpers/frame-shapes.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ""), "hex"));

function baseRequest(samplingParams: SamplingParamsInit | null = {}): EngineCoreRequest {
  return {
    requestId: "r",
    promptTokenIds: [1, 2],
    mmFeatures: null,
    samplingParams,
    poolingParams: null,
    arrivalTime: 1.5,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
  };
}

/** Hand-shaped ADD payload (opaque encoding: lets tests put wrong wire types where the schema forbids them). */
function addFrames(fields: unknown[]): Uint8Array[] {
  return [Uint8Array.of(0), encodeValue(fields)];
}

function protocolError(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError);
    return err as ProtocolError;
  }
  throw new Error("expected a ProtocolError");
}

const REQ_PREFIX = (sp: unknown) => ["r", [1], null, sp, null, new Float64(1), null, null, null];

describe("typed decoding is strict like msgspec", () => {
  it("rejects a float for an int field (max_tokens: 16.0) and names the field", () => {
    const err = protocolError(() =>
      decodeInputMessage(addFrames(REQ_PREFIX({ max_tokens: new Float64(16) }))),
    );
    expect(err.struct).toBe("EngineCoreRequest");
    expect(err.field).toBe("EngineCoreRequest.sampling_params.max_tokens");
    expect(err.message).toMatch(/expected int, got float64/);
  });

  it("rejects a bool for an int field (top_k: true)", () => {
    const err = protocolError(() => decodeInputMessage(addFrames(REQ_PREFIX({ top_k: true }))));
    expect(err.field).toBe("EngineCoreRequest.sampling_params.top_k");
    expect(err.message).toMatch(/got bool/);
  });

  it("rejects an int for a str field", () => {
    const err = protocolError(() =>
      decodeInputMessage(addFrames([5, [1], null, null, null, 1, null, null, null])),
    );
    expect(err.field).toBe("EngineCoreRequest.request_id");
  });

  it("accepts ints and float32 for float fields", () => {
    const asInt = decodeInputMessage(addFrames(REQ_PREFIX({ temperature: 1 })));
    expect(asInt.type === "add" && asInt.request.samplingParams?.temperature).toBe(1);
    // temperature as float32 0.5: ca 3f000000
    const payload = fromHex(
      `99 a172 9101 c0 81 ab74656d7065726174757265 ca3f000000 c0 cb3ff0000000000000 c0 c0 c0`,
    );
    const m = decodeInputMessage([Uint8Array.of(0), payload]);
    expect(m.type === "add" && m.request.samplingParams?.temperature).toBe(0.5);
  });

  it("requires int keys for logit_bias (dict[int, float])", () => {
    const err = protocolError(() => decodeInputMessage(addFrames(REQ_PREFIX({ logit_bias: { "5": 0.5 } }))));
    expect(err.field).toBe("EngineCoreRequest.sampling_params.logit_bias{key 0}");
    const ok = decodeInputMessage(addFrames(REQ_PREFIX({ logit_bias: new Map([[5, new Float64(0.5)]]) })));
    expect(ok.type === "add" && ok.request.samplingParams?.logitBias).toEqual(new Map([[5, 0.5]]));
  });

  it("rejects enum values that are not members", () => {
    const err = protocolError(() => decodeInputMessage(addFrames(REQ_PREFIX({ output_kind: 7 }))));
    expect(err.message).toMatch(/RequestOutputKind/);
    const out = encodeValue([0, [["id", [1], null, null, null, 9]]]);
    expect(protocolError(() => decodeEngineCoreOutputs([out])).field).toBe(
      "EngineCoreOutputs.outputs[0].finish_reason",
    );
  });

  it("rejects trailing bytes after the top-level value", () => {
    const [main] = encodeEngineCoreOutputs({});
    const withGarbage = new Uint8Array([...main!, 0xc0]);
    expect(protocolError(() => decodeEngineCoreOutputs([withGarbage])).message).toMatch(/trailing/);
  });

  it("names the full field path of a bad nested value", () => {
    const outputs = [
      0,
      [
        ["a", [1]],
        ["b", [2]],
        ["c", [3]],
        ["d", [new Float64(1)]],
      ],
    ];
    const err = protocolError(() => decodeEngineCoreOutputs([encodeValue(outputs)]));
    expect(err.field).toBe("EngineCoreOutputs.outputs[3].new_token_ids[0]");
    expect(err.code).toBe("PROTOCOL_ERROR");
  });
});

describe("array_like structs", () => {
  it("always writes every field: 20-element request (dc 00 14), 8-element outputs (98), 14-element output (9e)", () => {
    const [, payload] = encodeAddRequest(baseRequest());
    expect(hex(payload!).slice(0, 6)).toBe("dc0014");
    const [out] = encodeEngineCoreOutputs({ outputs: [{ requestId: "x", newTokenIds: [] }] });
    expect(hex(out!).slice(0, 8)).toBe("9800919e");
  });

  it("decodes short arrays down to the last required field, filling defaults", () => {
    const m = decodeInputMessage(addFrames(REQ_PREFIX({})));
    expect(m.type).toBe("add");
    if (m.type !== "add") return;
    expect(m.request.clientIndex).toBe(0);
    expect(m.request.priority).toBe(0);
    expect(m.request.abortImmediately).toBe(false);
    expect(m.request.promptEmbeds).toBeNull();
    const outputs = decodeEngineCoreOutputs([fromHex("90")]);
    expect(outputs.outputs).toEqual([]);
    expect(outputs.timestamp).toBe(0);
  });

  it("rejects arrays shorter than the required prefix", () => {
    const err = protocolError(() => decodeInputMessage(addFrames(REQ_PREFIX({}).slice(0, 8))));
    expect(err.message).toMatch(/expected array of at least length 9, got 8/);
    const out = protocolError(() => decodeEngineCoreOutputs([encodeValue([0, [["only-id"]]])]));
    expect(out.field).toBe("EngineCoreOutputs.outputs[0]");
    expect(out.message).toMatch(/at least length 2/);
  });

  it("ignores extra trailing elements", () => {
    const out = decodeEngineCoreOutputs([
      encodeValue([
        3,
        [["a", [1], null, null, null, null, null, null, null, null, null, null, null, 0, "x", 1, 2]],
        null,
        1,
        null,
        null,
        null,
        null,
        "extra",
        9,
      ]),
    ]);
    expect(out.engineIndex).toBe(3);
    expect(out.outputs[0]!.requestId).toBe("a");
  });
});

describe("map structs", () => {
  it("SamplingParams: map16 header even when empty (de 00 00)", () => {
    const [, payload] = encodeAddRequest(baseRequest({}));
    expect(hex(payload!)).toContain("c0de0000c0");
  });

  it("SamplingParams: writes exactly the keys present, in declaration order, count patched", () => {
    const [, payload] = encodeAddRequest(
      baseRequest({ maxTokens: 16, temperature: 1, stop: [], n: undefined }),
    );
    // temperature (field 4) before stop (9) before max_tokens (12); n is undefined → absent.
    const key = (k: string) => hex(encodeValue(k));
    const expected = `de0003${key("temperature")}cb3ff0000000000000${key("stop")}90${key("max_tokens")}10`;
    expect(hex(payload!)).toContain(expected);
    const m = decodeInputMessage([Uint8Array.of(0), payload!]);
    expect(m.type === "add" && m.request.samplingParams).toEqual({ temperature: 1, stop: [], maxTokens: 16 });
  });

  it("floats are always float64, even integral (temperature: 1 → cb 3ff0…)", () => {
    const [, payload] = encodeAddRequest(baseRequest({ temperature: 1 }));
    expect(hex(payload!)).toContain(`ab74656d7065726174757265cb3ff0000000000000`);
  });

  it("resolveSamplingParams fills vLLM's defaults for absent keys", () => {
    const r = resolveSamplingParams({ temperature: 0.5 });
    expect(r.temperature).toBe(0.5);
    expect(r.maxTokens).toBe(16);
    expect(r.topP).toBe(1);
    expect(r.detokenize).toBe(true);
    expect(r.allStopTokenIds).toEqual([]);
    expect(r.seed).toBeNull();
    expect(r.outputKind).toBe(0);
  });

  it("dataclasses: unknown keys ignored, missing defaulted keys filled, missing required keys rejected", () => {
    const base = {
      max_model_len: 1,
      num_gpu_blocks: 2,
      block_size: 16,
      dp_stats_address: null,
      dtype: "bfloat16",
      vllm_version: "x",
      world_size: 1,
      data_parallel_size: 1,
      tensor_parallel_size: 1,
      pipeline_parallel_size: 1,
      decode_context_parallel_size: 1,
      data_parallel_rank: 0,
      max_num_seqs: 8,
      max_num_batched_tokens: 64,
      instance_id: "i",
    };
    const r = decodeReadyResponse(encodeValue({ ...base, supports_lora: true, future: [1, 2] }));
    expect(r.maxModelLen).toBe(1);
    expect(r.kvEventsConfig).toBeNull();
    expect(r.kvCacheSizeTokens).toBeNull();
    const { instance_id: _omit, ...missing } = base;
    const err = protocolError(() => decodeReadyResponse(encodeValue(missing)));
    expect(err.field).toBe("EngineCoreReadyResponse.instance_id");
    expect(err.message).toMatch(/missing required field/);
  });

  it("SamplingParams ignores unknown keys (newer engines' fields)", () => {
    const m = decodeInputMessage(addFrames(REQ_PREFIX({ watermarking: false, max_tokens: 3 })));
    expect(m.type === "add" && m.request.samplingParams).toEqual({ maxTokens: 3 });
  });

  it("validates __post_init__ rules of StructuredOutputsParams, LoRARequest, RepetitionDetectionParams", () => {
    const two = { json: "{}", regex: "a+" };
    expect(
      protocolError(() => decodeInputMessage(addFrames(REQ_PREFIX({ structured_outputs: two })))).message,
    ).toMatch(/only one kind/);
    expect(() => encodeAddRequest(baseRequest({ structuredOutputs: {} }))).toThrow(/must be set/);
    const lora = ["r", [1], null, null, null, 1, ["a", 0, "/p"], null, null];
    expect(protocolError(() => decodeInputMessage(addFrames(lora))).message).toMatch(
      /lora_int_id must be > 0/,
    );
    expect(() =>
      encodeAddRequest(baseRequest({ repetitionDetection: { maxPatternSize: 3, minCount: 1 } })),
    ).toThrow(/min_count/);
  });
});

describe("integers", () => {
  const cases: [number, string][] = [
    [0, "00"],
    [127, "7f"],
    [128, "cc80"],
    [255, "ccff"],
    [256, "cd0100"],
    [65535, "cdffff"],
    [65536, "ce00010000"],
    [4294967295, "ceffffffff"],
    [4294967296, "cf0000000100000000"],
    [Number.MAX_SAFE_INTEGER, "cf001fffffffffffff"],
    [-1, "ff"],
    [-32, "e0"],
    [-33, "d0df"],
    [-128, "d080"],
    [-129, "d1ff7f"],
    [-32768, "d18000"],
    [-32769, "d2ffff7fff"],
    [-2147483648, "d280000000"],
    [-2147483649, "d3ffffffff7fffffff"],
  ];
  it.each(cases)("%d → smallest encoding %s", (n, expected) => {
    expect(hex(encodeValue(n))).toBe(expected);
    expect(decodeValue(fromHex(expected))).toBe(n);
  });

  it("u64 call ids: bigint always on decode, uint64 (cf) at and above 2^63, exact above 2^53", () => {
    for (const id of [0n, 5n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n, 17357386176853808775n]) {
      const [, payload] = encodeUtilityCall({ clientIndex: 0, callId: id, method: "m", args: [] });
      if (id >= 2n ** 32n) expect(hex(payload!).slice(4, 6)).toBe("cf");
      const m = decodeInputMessage([Uint8Array.of(3), payload!]);
      expect(m.type === "utility" && m.call.callId).toBe(id);
    }
    const [, small] = encodeUtilityCall({ clientIndex: 0, callId: 7, method: "m", args: [] });
    expect(hex(small!)).toBe("940007a16d90");
    const out = decodeEngineCoreOutputs([
      encodeValue([0, [], null, 1, [-1, null, [null, ["RECONFIGURE_FINISHED", 0]]]]),
    ]);
    expect(out.utilityOutput?.callId).toBe(-1n);
    expect(() => encodeUtilityCall({ clientIndex: 0, callId: 2n ** 64n, method: "m", args: [] })).toThrow(
      ProtocolError,
    );
  });

  it("rejects unsafe JS numbers for int fields on encode", () => {
    expect(() => encodeAddRequest(baseRequest({ maxTokens: 1.5 }))).toThrow(/sampling_params\.max_tokens/);
    expect(() => encodeAddRequest(baseRequest({ topK: 2 ** 60 }))).toThrow(ProtocolError);
  });
});

describe("strings", () => {
  it.each([
    [31, "bf"],
    [32, "d920"],
    [255, "d9ff"],
    [256, "da0100"],
    [65536, "db00010000"],
  ])("length %d uses header %s", (len, header) => {
    const s = "x".repeat(len);
    const bytes = encodeValue(s);
    expect(hex(bytes.subarray(0, header.length / 2))).toBe(header);
    expect(decodeValue(bytes)).toBe(s);
  });

  it("round-trips non-ASCII text and rejects invalid UTF-8", () => {
    for (const s of ["héllo", "日本語のテキスト", "emoji 🎉 ok", "é".repeat(40)])
      expect(decodeValue(encodeValue(s))).toBe(s);
    expect(() => decodeValue(fromHex("a2c328"))).toThrow(ProtocolError);
  });
});

describe("opaque values", () => {
  it("numbers: integral → int, non-integral → float64, Float64 → float64; integral floats decode to Float64", () => {
    expect(hex(encodeValue(3))).toBe("03");
    expect(hex(encodeValue(0.5))).toBe("cb3fe0000000000000");
    expect(hex(encodeValue(new Float64(1)))).toBe("cb3ff0000000000000");
    expect(decodeValue(fromHex("cb3ff0000000000000"))).toEqual(new Float64(1));
    expect(decodeValue(fromHex("ca3f000000"))).toBe(0.5);
    expect(decodeValue(fromHex("ca3f800000"))).toEqual(new Float64(1));
  });

  it("bigints outside the safe range", () => {
    expect(hex(encodeValue(2n ** 63n))).toBe("cf8000000000000000");
    expect(hex(encodeValue(-(2n ** 63n)))).toBe("d38000000000000000");
    expect(decodeValue(fromHex("cf8000000000000000"))).toBe(2n ** 63n);
    expect(decodeValue(fromHex("d38000000000000000"))).toBe(-(2n ** 63n));
    expect(decodeValue(fromHex("cf0000000000000005"))).toBe(5);
  });

  it("maps: str keys → plain object (safe against __proto__), other keys → Map", () => {
    const evil = decodeValue(encodeValue(new Map([["__proto__", { polluted: true }]]))) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(evil)).toBe(Object.prototype);
    expect(Object.keys(evil)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(decodeValue(encodeValue(new Map([[1, "a"]])))).toEqual(new Map([[1, "a"]]));
    expect(decodeValue(encodeValue({ a: [1, null, true] }))).toEqual({ a: [1, null, true] });
  });

  it("bin ↔ Uint8Array, ext ↔ MsgpackExt (never executed)", () => {
    expect(hex(encodeValue(Uint8Array.of(1, 2)))).toBe("c4020102");
    expect(decodeValue(fromHex("c4020102"))).toEqual(Uint8Array.of(1, 2));
    const pickle = decodeValue(fromHex("c70301800300"));
    expect(pickle).toBeInstanceOf(MsgpackExt);
    expect(pickle).toEqual(new MsgpackExt(1, Uint8Array.of(0x80, 0x03, 0x00)));
    expect(hex(encodeValue(pickle))).toBe("c70301800300");
    expect(hex(encodeValue(new MsgpackExt(3, Uint8Array.of(1, 2, 3, 4))))).toBe("d60301020304");
  });

  it("rejects class instances, functions and cycles on encode", () => {
    expect(() => encodeValue(new Date())).toThrow(ProtocolError);
    expect(() => encodeValue(() => 1)).toThrow(ProtocolError);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => encodeValue(cyclic)).toThrow(/nested too deeply/);
  });

  it("rejects deeply nested input without a stack overflow", () => {
    const deep = new Uint8Array(100_000).fill(0x91);
    expect(() => decodeValue(deep)).toThrow(ProtocolError);
  });
});
