// Tensors / ndarrays: inline ext 3 vs aux frames, depth-first numbering, zero-copy typed views.
import { describe, expect, it } from "vitest";
import {
  decodeEngineCoreOutputs,
  decodeInputMessage,
  type EngineCoreRequest,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  encodeValue,
  ProtocolError,
  type Tensor,
} from "../src/index.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

function logprobs(rows: number, cols: number, base: number) {
  return {
    logprobTokenIds: {
      dtype: "<i4",
      shape: [rows, cols],
      data: Int32Array.from({ length: rows * cols }, (_, i) => base + i),
    },
    logprobs: {
      dtype: "<f4",
      shape: [rows, cols],
      data: Float32Array.from({ length: rows * cols }, (_, i) => -i / 4),
    },
    sampledTokenRanks: {
      dtype: "<i4",
      shape: [rows],
      data: Int32Array.from({ length: rows }, (_, i) => i + 1),
    },
    cuNumGeneratedTokens: null,
  };
}

describe("tensor encoding", () => {
  it("inlines arrays below the threshold as ext 3 and moves larger ones to aux frames, depth-first", () => {
    const frames = encodeEngineCoreOutputs({
      outputs: [
        { requestId: "a", newTokenIds: [1], newLogprobs: logprobs(2, 3, 10) }, // 24 B each → inline
        { requestId: "b", newTokenIds: [2], newLogprobs: logprobs(20, 5, 100) }, // 400 B, 400 B, 80 B
      ],
    });
    expect(frames.length).toBe(3); // main + two aux (the 80-byte ranks stay inline)
    const decoded = decodeEngineCoreOutputs(frames);
    const b = decoded.outputs[1]!.newLogprobs!;
    expect([...(b.logprobTokenIds.data as Int32Array)].slice(0, 3)).toEqual([100, 101, 102]);
    expect(b.logprobTokenIds.data.buffer).toBe(frames[1]!.buffer);
    expect(b.logprobs.data.buffer).toBe(frames[2]!.buffer);
    expect(hex(frames[1]!)).toBe(
      hex(new Uint8Array(Int32Array.from({ length: 100 }, (_, i) => 100 + i).buffer)),
    );
    // aux indices 1 and 2 in the main frame, in encounter order
    expect(hex(frames[0]!)).toContain(`a33c6934921405${"01"}`);
    expect(hex(frames[0]!)).toContain(`a33c6634921405${"02"}`);
  });

  it("auxThreshold option and 0-dim arrays (always inline)", () => {
    const scalar: Tensor = { dtype: "<f8", shape: [], data: Float64Array.of(2.5) };
    const frames = encodeEngineCoreOutputs(
      { outputs: [{ requestId: "p", newTokenIds: [], poolingOutput: scalar }] },
      { auxThreshold: 1 },
    );
    expect(frames.length).toBe(1);
    const small: Tensor = { dtype: "float32", shape: [2], data: Float32Array.of(1, 2) };
    expect(
      encodeEngineCoreOutputs(
        { outputs: [{ requestId: "p", newTokenIds: [], poolingOutput: small }] },
        { auxThreshold: 8 },
      ).length,
    ).toBe(2);
    expect(
      encodeEngineCoreOutputs(
        { outputs: [{ requestId: "p", newTokenIds: [], poolingOutput: small }] },
        { auxThreshold: 9 },
      ).length,
    ).toBe(1);
  });

  it("request-side tensors (mm features, prompt embeds) number aux frames after the type byte", () => {
    const big = new Float32Array(128).map((_, i) => i);
    const request: EngineCoreRequest = {
      requestId: "mm",
      promptTokenIds: [1, 2, 3],
      mmFeatures: [
        {
          data: {
            pixel_values: {
              data: { dtype: "float32", shape: [128], data: big },
              field: ["batched", { keep_on_cpu: false }],
            },
          },
          modality: "image",
          identifier: "id",
          mmPosition: {
            offset: 1,
            length: 2,
            isEmbed: { dtype: "bool", shape: [2], data: Uint8Array.of(1, 0) },
          },
        },
      ],
      samplingParams: { maxTokens: 4 },
      arrivalTime: 1,
      promptEmbeds: { dtype: "bfloat16", shape: [2, 128], data: new Uint16Array(256) },
    };
    const frames = encodeAddRequest(request);
    expect(frames.length).toBe(4); // type, payload, pixel_values (512 B), prompt_embeds (512 B)
    const m = decodeInputMessage(frames);
    expect(m.type).toBe("add");
    if (m.type !== "add") return;
    const feature = m.request.mmFeatures![0]!;
    const pv = feature.data!.pixel_values!.data as Tensor;
    expect(pv.data).toBeInstanceOf(Float32Array);
    expect([...(pv.data as Float32Array)]).toEqual([...big]);
    expect(feature.mmPosition.isEmbed!.data).toEqual(Uint8Array.of(1, 0));
    expect(m.request.promptEmbeds!.data).toBeInstanceOf(Uint16Array);
    expect(m.request.promptEmbeds!.data.buffer).toBe(frames[3]!.buffer);
    expect(encodeAddRequest(m.request).map(hex)).toEqual(frames.map(hex));
  });
});

describe("tensor decoding", () => {
  const out = (tensor: unknown[]) => encodeValue([0, [["r", [], null, null, tensor]]]);

  it("maps dtypes to typed arrays", () => {
    const cases: [string, number, unknown][] = [
      ["<i4", 4, Int32Array],
      ["int32", 4, Int32Array],
      ["<i8", 8, BigInt64Array],
      ["int64", 8, BigInt64Array],
      ["<f4", 4, Float32Array],
      ["<f8", 8, Float64Array],
      ["|b1", 1, Uint8Array],
      ["bool", 1, Uint8Array],
      ["uint8", 1, Uint8Array],
      ["bfloat16", 2, Uint16Array],
      ["float16", 2, Uint16Array],
      ["<c16", 16, Uint8Array], // unknown → raw bytes
    ];
    for (const [dtype, size, ctor] of cases) {
      const frames = [out([dtype, [2], 1]), new Uint8Array(2 * size)];
      const t = decodeEngineCoreOutputs(frames).outputs[0]!.poolingOutput!;
      expect(t.data, dtype).toBeInstanceOf(ctor as never);
      expect(t.data.byteLength).toBe(2 * size);
    }
  });

  it("copies only when the bytes are not aligned for the element type", () => {
    const backing = new Uint8Array(17);
    const unaligned = backing.subarray(1);
    unaligned.set(new Uint8Array(Float64Array.of(1.5, -2).buffer));
    const t = decodeEngineCoreOutputs([out(["<f8", [2], 1]), unaligned]).outputs[0]!.poolingOutput!;
    expect([...(t.data as Float64Array)]).toEqual([1.5, -2]);
    expect(t.data.buffer).not.toBe(backing.buffer);
    const aligned = new Uint8Array(Float64Array.of(3, 4).buffer);
    const t2 = decodeEngineCoreOutputs([out(["<f8", [2], 1]), aligned]).outputs[0]!.poolingOutput!;
    expect(t2.data.buffer).toBe(aligned.buffer);
  });

  it("rejects an aux index out of range, a bad ext type, a wrong byte count and bad shapes", () => {
    const path = "EngineCoreOutputs.outputs[0].pooling_output[2]";
    const cases: [Uint8Array[], RegExp][] = [
      [[out(["<i4", [1], 1])], /aux frame index 1 out of range/],
      [[out(["<i4", [1], 0])], /aux frame index 0 out of range/],
      [[out(["<i4", [2], 1]), new Uint8Array(4)], /needs 8/],
      [[encodeValue([0, [["r", [], null, null, ["<i4", [1], { ext: 1 }]]]])], /ext 3 or an aux frame index/],
    ];
    for (const [frames, re] of cases) {
      expect(() => decodeEngineCoreOutputs(frames)).toThrow(re);
      try {
        decodeEngineCoreOutputs(frames);
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
        expect((err as ProtocolError).field).toBe(path);
      }
    }
    // ext type 1 (pickle) where raw bytes are expected: c7 len type data
    const pickled = new Uint8Array([...out(["<i4", [1], 0]).subarray(0, -1), 0xd6, 0x01, 0, 0, 0, 0]);
    expect(() => decodeEngineCoreOutputs([pickled])).toThrow(/unsupported ext type 1/);
    expect(() => decodeEngineCoreOutputs([out(["<i4", [-1], 1]), new Uint8Array(0)])).toThrow(
      /negative dimension/,
    );
    expect(() => decodeEngineCoreOutputs([out(["<i4", [1]])])).toThrow(/3 elements/);
  });
});
