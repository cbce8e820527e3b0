// Where the decoder accepts or rejects differently from msgspec as vLLM runs it (README "Where the decoder
// differs from msgspec"): one test per claim, every decode through the frame-shape helper. msgspec behaviour
// cited from msgspec's _core.c (mpack_decode_*) and vLLM's vllm/v1/serial_utils.py (MsgpackDecoder).
import { describe, expect, it } from "vitest";
import {
  type EngineCoreRequest,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  encodeValue,
  Float64,
  MsgpackExt,
  ProtocolError,
} from "../src/index.js";
import {
  decodeEngineCoreOutputs,
  decodeInputMessage,
  decodeReadyResponse,
  decodeValue,
} from "./helpers/frame-shapes.js";

/** Concatenate raw bytes and encoded values (hand-built messages the encoder would never write). */
function bytes(...parts: (number | Uint8Array)[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => (typeof p === "number" ? [p] : [...p])));
}
const enc = encodeValue;

/** An ADD whose SamplingParams map is given as raw bytes (first 9 fields of EngineCoreRequest). */
function addWithSampling(samplingParams: Uint8Array): Uint8Array[] {
  const payload = bytes(
    0x99,
    enc("r"),
    enc([1]),
    0xc0,
    samplingParams,
    0xc0,
    enc(new Float64(1)),
    0xc0,
    0xc0,
    0xc0,
  );
  return [Uint8Array.of(0), payload];
}
const sampling = (entries: [string, unknown][]) =>
  bytes(0xde, 0, entries.length, ...entries.flatMap(([k, v]) => [enc(k), enc(v)]));

function decodedSampling(frames: Uint8Array[]) {
  const m = decodeInputMessage(frames);
  if (m.type !== "add") throw new Error("not an ADD");
  return m.request.samplingParams;
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

describe("ints above 2^53 in typed fields", () => {
  it("an `int` field rejects |v| > 2^53 − 1 (msgspec accepts the whole int64/uint64 range)", () => {
    for (const v of [2n ** 53n, 2n ** 63n, 2n ** 64n - 1n, -(2n ** 53n), -(2n ** 63n)]) {
      const err = protocolError(() => decodeInputMessage(addWithSampling(sampling([["max_tokens", v]]))));
      expect(err.field).toBe("EngineCoreRequest.sampling_params.max_tokens");
      expect(err.message).toMatch(/outside JavaScript's safe integer range/);
    }
    for (const v of [2 ** 53 - 1, -(2 ** 53 - 1)]) {
      expect(decodedSampling(addWithSampling(sampling([["max_tokens", v]])))?.maxTokens).toBe(v);
    }
    const out = protocolError(() => decodeEngineCoreOutputs([enc([2n ** 60n, []])]));
    expect(out.field).toBe("EngineCoreOutputs.engine_index");
  });

  it("seed decodes exactly: a number when safe, a bigint beyond", () => {
    for (const [v, expected] of [
      [7, 7],
      [2n ** 63n + 5n, 9223372036854775813n],
      [-(2n ** 63n), -9223372036854775808n],
      [2n ** 64n - 1n, 18446744073709551615n],
    ] as const) {
      expect(decodedSampling(addWithSampling(sampling([["seed", v]])))?.seed).toBe(expected);
    }
  });

  it("a `float` field takes any int, rounded to the nearest double as Python's float() does", () => {
    const sp = decodedSampling(addWithSampling(sampling([["temperature", 2n ** 60n + 1n]])));
    expect(sp?.temperature).toBe(2 ** 60);
  });

  it("opaque (Any) values keep every int exactly (bigint outside the safe range)", () => {
    expect(decodeValue(enc([2n ** 64n - 1n, -(2n ** 63n), 2 ** 53 - 1]))).toEqual([
      18446744073709551615n,
      -9223372036854775808n,
      2 ** 53 - 1,
    ]);
  });
});

describe("nesting depth", () => {
  const nested = (depth: number) => bytes(...new Array<number>(depth).fill(0x91), 0xc0);

  it("opaque values: 512 levels decode, 513 fail with a ProtocolError (msgspec: the interpreter's recursion limit)", () => {
    let v = decodeValue(nested(512));
    for (let i = 0; i < 512; i++) v = (v as unknown[])[0];
    expect(v).toBeNull();
    expect(protocolError(() => decodeValue(nested(513))).message).toMatch(
      /nested too deeply \(more than 512 levels\)/,
    );
  });

  it("hostile nesting (100,000 levels) is the same ProtocolError, not a stack overflow", () => {
    expect(protocolError(() => decodeValue(nested(100_000))).message).toMatch(/more than 512 levels/);
  });

  it("nested tensor lists of multimodal fields are bounded the same way", () => {
    const withDepth = (depth: number): EngineCoreRequest => {
      let data: unknown = 1;
      for (let i = 0; i < depth; i++) data = [data];
      return {
        requestId: "mm",
        promptTokenIds: [1],
        mmFeatures: [
          {
            data: { pixel_values: { data: data as never, field: null } },
            modality: "image",
            identifier: "id",
            mmPosition: { offset: 0, length: 1 },
          },
        ],
        samplingParams: {},
        arrivalTime: 1,
      };
    };
    expect(decodeInputMessage(encodeAddRequest(withDepth(512))).type).toBe("add");
    const err = protocolError(() => decodeInputMessage(encodeAddRequest(withDepth(513))));
    expect(err.field).toMatch(/^EngineCoreRequest\.mm_features\[0\]\.data\["pixel_values"\]\.data\[0\]/);
    expect(err.message).toMatch(/more than 512 levels/);
  });
});

describe("duplicate map keys", () => {
  it("struct maps: the last occurrence wins, as in msgspec (mpack_decode_struct_map overwrites)", () => {
    const sp = decodedSampling(
      addWithSampling(
        sampling([
          ["max_tokens", 3],
          ["max_tokens", 5],
        ]),
      ),
    );
    expect(sp).toEqual({ maxTokens: 5 });
    // A dataclass (EngineCoreReadyResponse): the 15 required keys, then max_model_len again.
    const required = {
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
    const body = enc(required).subarray(1); // without the fixmap header (15 entries)
    const ready = decodeReadyResponse(bytes(0xde, 0, 16, body, enc("max_model_len"), enc(4096)));
    expect(ready.maxModelLen).toBe(4096);
    expect(ready.numGpuBlocks).toBe(2);
  });

  it("opaque str-keyed maps: the last value wins, at the first key's position (as a Python dict)", () => {
    const m = bytes(0x83, enc("a"), 1, enc("b"), 2, enc("a"), 3);
    const v = decodeValue(m) as Record<string, number>;
    expect(v).toEqual({ a: 3, b: 2 });
    expect(Object.keys(v)).toEqual(["a", "b"]);
  });

  it("opaque maps with keys Python treats as equal: 1 and 1.0 collapse, 1 and True do not", () => {
    expect(decodeValue(bytes(0x82, 1, enc("x"), enc(new Float64(1)), enc("y")))).toEqual(new Map([[1, "y"]]));
    // Python: {1: 'x', True: 'y'} == {1: 'y'} (True == 1); a JS Map keeps both keys.
    expect(decodeValue(bytes(0x82, 1, enc("x"), 0xc3, enc("y")))).toEqual(
      new Map<unknown, string>([
        [1, "x"],
        [true, "y"],
      ]),
    );
  });

  it("opaque str-keyed maps: integer-like keys come first in a JS object (Python keeps wire order)", () => {
    const wire = bytes(0x82, enc("b"), 1, enc("2"), 2);
    const v = decodeValue(wire) as Record<string, number>;
    expect(Object.keys(v)).toEqual(["2", "b"]);
    // Same value, different bytes when re-encoded.
    expect(Buffer.from(encodeValue(v)).equals(Buffer.from(wire))).toBe(false);
  });
});

describe("ext values in opaque positions", () => {
  it("every ext code decodes to a MsgpackExt (msgspec: -1 is a datetime; vLLM's ext_hook: 3 → raw bytes, 1/2 → unpickled or refused, others refused)", () => {
    for (const code of [-1, 1, 2, 3, 42]) {
      const v = decodeValue(bytes(0xd6, code & 0xff, 1, 2, 3, 4));
      expect(v).toEqual(new MsgpackExt(code, Uint8Array.of(1, 2, 3, 4)));
    }
  });
});

describe("__post_init__ that msgspec runs on decode", () => {
  it("EngineCoreOutputs.timestamp 0.0 stays 0 (vLLM replaces it with the decoder's time.monotonic())", () => {
    const [main] = encodeEngineCoreOutputs({ outputs: [], timestamp: 0 });
    expect(decodeEngineCoreOutputs([main!]).timestamp).toBe(0);
  });

  it("SamplingParams is not normalised (vLLM: seed -1 → None, stop str → [str], greedy resets top_p)", () => {
    const sp = decodedSampling(
      addWithSampling(
        sampling([
          ["temperature", new Float64(0)],
          ["top_p", 0.5],
          ["seed", -1],
          ["stop", "x"],
        ]),
      ),
    );
    expect(sp).toEqual({ temperature: 0, topP: 0.5, seed: -1, stop: "x" });
  });
});

describe("array lengths", () => {
  it("LogprobsLists tolerates a 5th element (msgspec's NamedTuple decode wants 3 to 4)", () => {
    const t = (dtype: string, data: ArrayBufferView) => [
      dtype,
      [1],
      new MsgpackExt(3, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)),
    ];
    const lp = [
      t("<i8", BigInt64Array.of(7n)),
      t("<f4", Float32Array.of(-1)),
      t("<i8", BigInt64Array.of(1n)),
      null,
      "new",
    ];
    const out = decodeEngineCoreOutputs([enc([0, [["r", [7], lp]]])]);
    expect([...(out.outputs[0]!.newLogprobs!.logprobTokenIds.data as BigInt64Array)]).toEqual([7n]);
  });
});
