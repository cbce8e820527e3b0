// Tensors / ndarrays: inline ext 3 vs aux frames, depth-first numbering, zero-copy typed views.
import { describe, expect, it } from "vitest";
import {
  type EngineCoreRequest,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  encodeValue,
  ProtocolError,
  type Tensor,
} from "../src/index.js";
import { decodeEachShape, decodeEngineCoreOutputs, decodeInputMessage } from "./helpers/frame-shapes.js";

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
    // Aux-frame tensors are views over their frame where the frame is aligned for the element type.
    for (const { shape, frames: shaped, value } of decodeEachShape("decodeEngineCoreOutputs", frames)) {
      const lp = value.outputs[1]!.newLogprobs!;
      for (const [tensor, frame] of [
        [lp.logprobTokenIds, shaped[1]!],
        [lp.logprobs, shaped[2]!],
      ] as const) {
        expect(tensor.data.byteOffset % 4 === 0 && tensor.data.buffer === frame.buffer, shape.name).toBe(
          frame.byteOffset % 4 === 0,
        );
      }
    }
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
    for (const { shape, frames: shaped, value } of decodeEachShape("decodeInputMessage", frames)) {
      if (value.type !== "add") throw new Error(`${shape.name}: not an ADD`);
      const embeds = value.request.promptEmbeds!.data;
      const frame = shaped[3]!;
      expect(embeds.buffer === frame.buffer && embeds.byteOffset === frame.byteOffset, shape.name).toBe(
        frame.byteOffset % 2 === 0,
      );
    }
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
    const data = new Uint8Array(Float64Array.of(1.5, -2).buffer);
    const shapes = decodeEachShape("decodeEngineCoreOutputs", [out(["<f8", [2], 1]), data]);
    const aligned = new Set<string>();
    for (const { shape, frames, value } of shapes) {
      const t = value.outputs[0]!.poolingOutput!;
      expect(t.data, shape.name).toBeInstanceOf(Float64Array);
      expect([...(t.data as Float64Array)], shape.name).toEqual([1.5, -2]);
      expect(t.data.byteOffset % 8, shape.name).toBe(0);
      const inPlace = t.data.buffer === frames[1]!.buffer && t.data.byteOffset === frames[1]!.byteOffset;
      expect(inPlace, shape.name).toBe(frames[1]!.byteOffset % 8 === 0);
      if (inPlace) aligned.add(shape.name);
      // A copy owns exactly its bytes: never the frame's (or the Buffer pool's) whole backing store.
      else expect(t.data.buffer.byteLength, shape.name).toBe(16);
    }
    // Both paths ran: in-place views (offset-0 frames) and copies (the unaligned views).
    expect(aligned.size).toBeGreaterThan(0);
    expect(aligned.size).toBeLessThan(shapes.length);
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

describe("tensors inside Node Buffer frames (zeromq.js delivers every frame as a Buffer)", () => {
  // Sampled logprobs as vLLM sends them: LogprobsLists (vllm/v1/outputs.py) of numpy arrays, int64 token ids
  // and ranks, float32 logprobs, each below the 256-byte aux threshold and so inline as ext 3
  // (vllm/v1/serial_utils.py, MsgpackEncoder._encode_ndarray) at whatever offset the main frame puts them.
  const ids = BigInt64Array.of(3n, 17n, 42n, 9007199254740993n, 5n, 6n);
  const logprobs = Float32Array.of(-0.25, -1.5, -3, -0.125, -7.75, -2);
  const ranks = BigInt64Array.of(3n, 1n);
  const frames = encodeEngineCoreOutputs({
    outputs: [
      {
        requestId: "req-12",
        newTokenIds: [3, 5],
        newLogprobs: {
          logprobTokenIds: { dtype: "<i8", shape: [2, 3], data: ids },
          logprobs: { dtype: "<f4", shape: [2, 3], data: logprobs },
          sampledTokenRanks: { dtype: "<i8", shape: [2], data: ranks },
          cuNumGeneratedTokens: null,
        },
      },
    ],
  });

  /** Offset of `data`'s bytes inside the main frame. */
  function offsetIn(frame: Uint8Array, data: ArrayBufferView): number {
    return Buffer.from(frame).indexOf(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  it("the test message: one frame, every tensor inline at an offset that is not aligned for its dtype", () => {
    expect(frames.length).toBe(1);
    for (const [data, size] of [
      [ids, 8],
      [logprobs, 4],
      [ranks, 8],
    ] as const) {
      const at = offsetIn(frames[0]!, data);
      expect(at).toBeGreaterThan(0);
      expect(at % size).not.toBe(0);
    }
  });

  it("decode to exactly the values sent, from a pooled Buffer, a Buffer of its own and unaligned views", () => {
    const results = decodeEachShape("decodeEngineCoreOutputs", frames);
    const byName = new Map(results.map((r) => [r.shape.name, r]));
    // The shapes this test is about really are what their names say.
    const pooled = byName.get("Buffer (pooled)")!.frames[0]!;
    expect(pooled).toBeInstanceOf(Buffer);
    expect(pooled.byteOffset).not.toBe(0);
    expect(pooled.buffer.byteLength).toBe(Buffer.poolSize);
    const own = byName.get("Buffer (own memory)")!.frames[0]!;
    expect(own).toBeInstanceOf(Buffer);
    expect([own.byteOffset, own.buffer.byteLength]).toEqual([0, frames[0]!.byteLength]);
    for (const { shape, value } of results) {
      const lp = value.outputs[0]!.newLogprobs!;
      expect(lp.logprobTokenIds.dtype, shape.name).toBe("<i8");
      expect(lp.logprobTokenIds.shape, shape.name).toEqual([2, 3]);
      expect(lp.logprobTokenIds.data, shape.name).toBeInstanceOf(BigInt64Array);
      expect([...(lp.logprobTokenIds.data as BigInt64Array)], shape.name).toEqual([...ids]);
      expect(lp.logprobs.data, shape.name).toBeInstanceOf(Float32Array);
      expect([...(lp.logprobs.data as Float32Array)], shape.name).toEqual([...logprobs]);
      expect([...(lp.sampledTokenRanks.data as BigInt64Array)], shape.name).toEqual([...ranks]);
    }
  });

  it("an aux-frame tensor inside a pooled Buffer is read from the frame's offset, not the pool's start", () => {
    // 40 float32 = 160 bytes: above a threshold of 64 → aux frame; 160 bytes fit in Node's pool.
    const data = Float32Array.from({ length: 40 }, (_, i) => i / 8 - 2);
    const msg = encodeEngineCoreOutputs(
      { outputs: [{ requestId: "p", newTokenIds: [], poolingOutput: { dtype: "<f4", shape: [40], data } }] },
      { auxThreshold: 64 },
    );
    expect(msg.length).toBe(2);
    for (const { shape, value } of decodeEachShape("decodeEngineCoreOutputs", msg)) {
      expect([...(value.outputs[0]!.poolingOutput!.data as Float32Array)], shape.name).toEqual([...data]);
    }
  });
});
