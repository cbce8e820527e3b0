// The routing-level read of EngineCoreOutputs (readOutputRoute) and the output-message shape rule. Every
// check runs on the three frame shapes a decoder meets: a plain Uint8Array, a Node Buffer (small ones come
// from Node's shared pool, so byteOffset ≠ 0) and unaligned views at byte offsets 1–7 of a larger buffer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EngineCoreOutputs,
  type EngineCoreOutputsInit,
  encodeEngineCoreOutputs,
  encodeValue,
  FinishReason,
  type OutputRoute,
  ProtocolError,
  readOutputRoute,
  readSchedulerStats,
  requestIdHash,
} from "../src/index.js";
import { skipValues } from "../src/msgpack/skip.js";
import { EngineCoreOutputsCodec } from "../src/structs/output.js";
import { arbitraryFor } from "./helpers/arbitraries.js";
import { decodeEngineCoreOutputs, decodeOutputMessage, FRAME_SHAPES } from "./helpers/frame-shapes.js";

/** The same bytes in every shape of the shared frame-shape helper (Uint8Array, Buffers, offsets 1–7). */
function frameShapes(bytes: Uint8Array): [string, Uint8Array][] {
  return FRAME_SHAPES.map((shape) => [shape.name, shape.make([bytes])[0]!]);
}

/** The route's fields other than the keys and the stats span, as one object. */
function fieldsOf(route: OutputRoute) {
  const { complete, engineIndex, requestIds, outputFinished, finishedRequests } = route;
  const { hasSchedulerStats, hasUtilityOutput, utilityCallId, hasWaveComplete, hasStartWave } = route;
  return {
    complete,
    engineIndex,
    requestIds,
    outputFinished,
    finishedRequests,
    hasSchedulerStats,
    hasUtilityOutput,
    utilityCallId,
    hasWaveComplete,
    hasStartWave,
  };
}

/** Each request id's key: its bytes in `main` decode to the id, and the hash is requestIdHash of them. */
function expectKeys(main: Uint8Array, route: OutputRoute, label: string): void {
  expect(route.outputCount, label).toBe(route.requestIds.length);
  for (let i = 0; i < route.outputCount; i++) {
    const start = route.requestIdKeys[3 * i]!;
    const end = route.requestIdKeys[3 * i + 1]!;
    expect(new TextDecoder().decode(main.subarray(start, end)), label).toBe(route.requestIds[i]);
    expect(route.requestIdKeys[3 * i + 2], label).toBe(requestIdHash(main, start, end));
    expect(requestIdHash(main, start, end), label).toBe(
      requestIdHash(new TextEncoder().encode(route.requestIds[i])),
    );
  }
}

function output(requestId: string, extra: Partial<EngineCoreOutputs["outputs"][number]> = {}) {
  return { requestId, newTokenIds: [1, 2, 3], finishReason: null, ...extra };
}

const rich: EngineCoreOutputsInit = {
  engineIndex: 3,
  timestamp: 12.5,
  outputs: [
    output("ascii-1"),
    output("ünïcödé-🚀"),
    output("x".repeat(40)), // str8 header
    output("y".repeat(300)), // str16 header
    output("lp", {
      newLogprobs: {
        logprobTokenIds: { dtype: "int32", shape: [80, 2], data: new Int32Array(160) }, // aux frame
        logprobs: { dtype: "float32", shape: [2, 2], data: new Float32Array(4) }, // inline ext 3
        sampledTokenRanks: { dtype: "int32", shape: [2], data: new Int32Array(2) },
        cuNumGeneratedTokens: null,
      },
      finishReason: FinishReason.LENGTH,
      kvTransferParams: { nested: [[[{ deep: 1 }]]], n: 2 ** 40 },
    } as never),
  ],
  schedulerStats: { numRunningReqs: 2 } as never,
  finishedRequests: ["ascii-1", "gone"],
};

describe("readOutputRoute", () => {
  it("reads engine index, request ids, finished ids and the stats flag of a valid message", () => {
    const frames = encodeEngineCoreOutputs(rich);
    expect(frames.length).toBeGreaterThan(1); // the logprob ids went to an aux frame
    for (const [shape, main] of frameShapes(frames[0]!)) {
      const read = readOutputRoute(main);
      expect(read.schedulerStatsSpan, shape).not.toBeNull();
      expectKeys(main, read, shape);
      expect(fieldsOf(read), shape).toEqual({
        complete: true,
        engineIndex: 3,
        requestIds: ["ascii-1", "ünïcödé-🚀", "x".repeat(40), "y".repeat(300), "lp"],
        outputFinished: [false, false, false, false, true],
        finishedRequests: ["ascii-1", "gone"],
        hasSchedulerStats: true,
        hasUtilityOutput: false,
        utilityCallId: null,
        hasWaveComplete: false,
        hasStartWave: false,
      });
    }
  });

  it("reads a utility reply's call id, up to 2^64 - 1", () => {
    for (const callId of [0n, 7n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
      const [main] = encodeEngineCoreOutputs({
        engineIndex: 1,
        utilityOutput: { callId, failureMessage: null, result: { typeInfo: null, value: { a: [1, 2] } } },
      });
      for (const [shape, view] of frameShapes(main!)) {
        const route = readOutputRoute(view);
        expect(
          { complete: route.complete, callId: route.utilityCallId, has: route.hasUtilityOutput },
          shape,
        ).toEqual({ complete: true, callId, has: true });
      }
    }
  });

  it("agrees with the full decoder on every message it accepts (property, 3 frame shapes)", () => {
    fc.assert(
      fc.property(
        arbitraryFor(EngineCoreOutputsCodec),
        fc.constantFrom(16, 256, Number.POSITIVE_INFINITY),
        (value, auxThreshold) => {
          const frames = encodeEngineCoreOutputs(value as EngineCoreOutputsInit, { auxThreshold });
          const decoded = decodeEngineCoreOutputs(frames);
          for (const [shape, main] of frameShapes(frames[0]!)) {
            const read = readOutputRoute(main);
            // The recorded span decodes to the full decoder's stats.
            expect(read.schedulerStatsSpan === null, shape).toBe(decoded.schedulerStats === null);
            expect(readSchedulerStats(main, read), shape).toEqual(decoded.schedulerStats);
            expectKeys(main, read, shape);
            expect(fieldsOf(read), shape).toEqual({
              complete: true,
              engineIndex: decoded.engineIndex,
              requestIds: decoded.outputs.map((o) => o.requestId),
              outputFinished: decoded.outputs.map((o) => o.finishReason !== null),
              finishedRequests: decoded.finishedRequests,
              hasSchedulerStats: decoded.schedulerStats !== null,
              hasUtilityOutput: decoded.utilityOutput !== null,
              utilityCallId: decoded.utilityOutput?.callId ?? null,
              hasWaveComplete: decoded.waveComplete !== null,
              hasStartWave: decoded.startWave !== null,
            });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("recovers the ids of a message the decoder rejects at a request field", () => {
    // new_token_ids of the second output is a str: structurally fine msgpack, rejected by the schema.
    const good = encodeEngineCoreOutputs({
      engineIndex: 0,
      outputs: [output("a"), output("b"), output("c")],
    })[0]!;
    const bad = replaceOnce(good, encodeValue([1, 2, 3]), encodeValue("not a token list"), 2);
    let error: unknown;
    try {
      decodeEngineCoreOutputs([bad]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).field).toBe("EngineCoreOutputs.outputs[1].new_token_ids");
    for (const [shape, view] of frameShapes(bad)) {
      const route = readOutputRoute(view);
      expect({ complete: route.complete, ids: route.requestIds }, shape).toEqual({
        complete: true,
        ids: ["a", "b", "c"],
      });
    }
  });

  it("a tensor pointing at an aux frame that was not sent: ids recovered, aux frames not needed", () => {
    const frames = encodeEngineCoreOutputs(rich);
    expect(() => decodeEngineCoreOutputs([frames[0]!])).toThrow(/aux frame index 1 out of range/);
    expect(readOutputRoute(frames[0]!).complete).toBe(true);
    expect(readOutputRoute(frames[0]!).requestIds).toHaveLength(5);
  });

  it("a message that is not msgpack, or not an array, yields nothing and is incomplete", () => {
    for (const bytes of [
      Uint8Array.of(),
      Uint8Array.of(0xc1, 0x41, 0x42),
      new TextEncoder().encode("ENGINE_CORE_DEAD"),
      encodeValue({ engine_index: 0 }),
      Uint8Array.of(0x98, 0x00, 0x91, 0x90), // an output with no request_id
      Uint8Array.of(0x98, 0x00, 0x91, 0x92, 0x07, 0x90), // request_id is an int
      Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff, 0x00), // 4 billion fields declared in 6 bytes
    ]) {
      for (const [shape, view] of frameShapes(bytes)) {
        const route = readOutputRoute(view);
        expect(route.complete, `${shape} ${Buffer.from(bytes).toString("hex")}`).toBe(false);
      }
    }
  });

  it("every truncation and every trailing byte is incomplete; the ids read before the cut are kept", () => {
    const main = encodeEngineCoreOutputs(rich)[0]!;
    const all = readOutputRoute(main).requestIds;
    for (let cut = 0; cut < main.byteLength; cut++) {
      const route = readOutputRoute(main.subarray(0, cut));
      expect(route.complete, `cut at ${cut}`).toBe(false);
      expect(all.slice(0, route.requestIds.length)).toEqual(route.requestIds);
    }
    const longer = new Uint8Array(main.byteLength + 1);
    longer.set(main);
    expect(readOutputRoute(longer).complete).toBe(false);
  });

  it("skips fields a later vLLM appends, and any nesting depth without recursion", () => {
    const nested = new Uint8Array(200_001);
    nested.fill(0x91, 0, 200_000); // 200,000 nested one-element arrays around a nil
    nested[200_000] = 0xc0;
    const head = encodeValue([0, [["r", [1]]], null, 0.5, null, null, null, null]);
    // 8 → 10 elements: a nested post-snapshot field, then an int.
    const main = new Uint8Array([0x9a, ...head.subarray(1), ...nested, 0x05]);
    const route = readOutputRoute(main);
    expect(route).toMatchObject({ complete: true, engineIndex: 0, requestIds: ["r"] });
  });

  it("never throws on random bytes or bit-flipped messages", () => {
    const main = encodeEngineCoreOutputs(rich)[0]!;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }),
          fc
            .array(fc.tuple(fc.nat(main.byteLength - 1), fc.integer({ min: 0, max: 7 })), { maxLength: 6 })
            .map((flips) => {
              const copy = Uint8Array.from(main);
              for (const [i, bit] of flips) copy[i]! ^= 1 << bit;
              return copy;
            }),
        ),
        (bytes) => {
          const route = readOutputRoute(bytes);
          let decoded: EngineCoreOutputs | undefined;
          try {
            decoded = decodeEngineCoreOutputs([bytes]);
          } catch {}
          if (decoded !== undefined) {
            expect(route.complete).toBe(true);
            expect(route.requestIds).toEqual(decoded.outputs.map((o) => o.requestId));
            expect(route.outputFinished).toEqual(decoded.outputs.map((o) => o.finishReason !== null));
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("skipValues", () => {
  it("steps over each msgpack format, and rejects 0xc1 and lengths past the end", () => {
    const values: unknown[] = [
      null,
      true,
      -1,
      127,
      255,
      65535,
      2 ** 32,
      -(2 ** 40),
      0.5,
      "s",
      "é".repeat(200),
      new Uint8Array(300),
      [1, [2]],
      { a: { b: 1 } },
    ];
    const bytes = new Uint8Array([...values.flatMap((v) => [...encodeValue(v)])]);
    for (const [shape, view] of frameShapes(bytes)) {
      expect(skipValues(view, 0, view.byteLength, values.length), shape).toBe(view.byteLength);
      expect(skipValues(view, 0, view.byteLength - 1, values.length), shape).toBe(-1);
    }
    expect(skipValues(Uint8Array.of(0xc1), 0, 1)).toBe(-1);
    expect(skipValues(Uint8Array.of(0xc7, 0x02, 0x03, 0xaa, 0xbb), 0, 5)).toBe(5); // ext8
    expect(skipValues(Uint8Array.of(0xd6, 0xff, 1, 2, 3, 4), 0, 6)).toBe(6); // fixext4
    expect(skipValues(Uint8Array.of(0xdf, 0x7f, 0xff, 0xff, 0xff), 0, 5)).toBe(-1); // map32 too long
  });
});

describe("decodeOutputMessage: shapes vLLM never sends", () => {
  const utility = { callId: 5n, failureMessage: null, result: { typeInfo: null, value: true } };
  it("request outputs together with a utility reply is a ProtocolError at utility_output", () => {
    for (const extra of [
      { outputs: [output("a")] },
      { finishedRequests: ["a"] },
      { schedulerStats: {} as never },
    ]) {
      const frames = encodeEngineCoreOutputs({ ...extra, utilityOutput: utility });
      for (const [shape, main] of frameShapes(frames[0]!)) {
        let error: unknown;
        try {
          decodeOutputMessage([main]);
        } catch (e) {
          error = e;
        }
        expect(error, shape).toBeInstanceOf(ProtocolError);
        expect((error as ProtocolError).field).toBe("EngineCoreOutputs.utility_output");
        expect((error as ProtocolError).message).toContain("a shape vLLM never sends");
        // The codec alone stays msgspec-exact: msgspec decodes the combination.
        expect(decodeEngineCoreOutputs([main]).utilityOutput?.callId).toBe(5n);
      }
    }
  });

  it("a wave notice together with anything else is rejected; each part alone, or nothing, is accepted", () => {
    expect(() => decodeOutputMessage(encodeEngineCoreOutputs({ waveComplete: 1, startWave: 2 }))).toThrow(
      /wave_complete notice and a start_wave notice/,
    );
    expect(() =>
      decodeOutputMessage(encodeEngineCoreOutputs({ outputs: [output("a")], waveComplete: 1 })),
    ).toThrow(ProtocolError);
    for (const alone of [
      {},
      { outputs: [output("a")], finishedRequests: ["a"], schedulerStats: {} as never },
      { utilityOutput: utility },
      { waveComplete: 3 },
      { startWave: 4 },
    ]) {
      expect(decodeOutputMessage(encodeEngineCoreOutputs(alone)).kind).toBe("outputs");
    }
  });
});

/** `bytes` with the `nth` (1-based) occurrence of `find` replaced by `replace`. */
function replaceOnce(bytes: Uint8Array, find: Uint8Array, replace: Uint8Array, nth: number): Uint8Array {
  const hex = Buffer.from(bytes).toString("hex");
  const needle = Buffer.from(find).toString("hex");
  let at = -1;
  for (let i = 0; i < nth; i++) {
    do at = hex.indexOf(needle, at + 1);
    while (at % 2 !== 0 && at >= 0);
  }
  if (at < 0) throw new Error("pattern not found");
  return Uint8Array.from(
    Buffer.from(
      hex.slice(0, at) + Buffer.from(replace).toString("hex") + hex.slice(at + needle.length),
      "hex",
    ),
  );
}
