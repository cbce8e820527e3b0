// Property-based round trips for every struct: decode(encode(x)) equals x, and re-encoding the
// decoded value reproduces the same bytes (and aux frames). Generators come from the field tables.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EngineCoreRequest,
  encodeAddRequest,
  encodeHandshakeStatus,
  encodeValue,
  type HandshakeStatus,
  VLLM_VERSIONS,
} from "../src/index.js";
import { encodeFrames } from "../src/messages/run.js";
import type { AnyCodec } from "../src/schema/codec.js";
import { StructCodec } from "../src/schema/struct.js";
import * as handshake from "../src/structs/handshake.js";
import * as output from "../src/structs/output.js";
import * as request from "../src/structs/request.js";
import * as sampling from "../src/structs/sampling.js";
import { arbitraryFor, opaque } from "./helpers/arbitraries.js";
import {
  decodeFrames,
  decodeHandshakeStatus,
  decodeInputMessage,
  decodeValue,
} from "./helpers/frame-shapes.js";

const hex = (fs: readonly Uint8Array[]) => fs.map((f) => Buffer.from(f).toString("hex"));
const SEED = 20260801;

const structs: [string, AnyCodec][] = [
  ["EngineCoreRequest", request.EngineCoreRequestCodec],
  ["SamplingParams", sampling.SamplingParamsCodec],
  ["StructuredOutputsParams", sampling.StructuredOutputsParamsCodec],
  ["RepetitionDetectionParams", sampling.RepetitionDetectionParamsCodec],
  ["PoolingParams", request.PoolingParamsCodec],
  ["LateInteractionParams", request.LateInteractionParamsCodec],
  ["LoRARequest", request.LoRARequestCodec],
  ["MultiModalFeatureSpec", request.MultiModalFeatureSpecCodec],
  ["MultiModalFieldElem", request.MultiModalFieldElemCodec],
  ["PlaceholderRange", request.PlaceholderRangeCodec],
  ["EngineCoreOutputs", output.EngineCoreOutputsCodec],
  ["EngineCoreOutput", output.EngineCoreOutputCodec],
  ["EngineCoreEvent", output.EngineCoreEventCodec],
  ["LogprobsLists", output.LogprobsListsCodec],
  ["LogprobsTensors", output.LogprobsTensorsCodec],
  ["PrefillStats", output.PrefillStatsCodec],
  ["PrefixCacheStats", output.PrefixCacheStatsCodec],
  ["SchedulerStats", output.SchedulerStatsCodec],
  ["UtilityOutput", output.UtilityOutputCodec],
  ["UtilityResult", output.UtilityResultCodec],
  ["EngineCoreReadyResponse", handshake.EngineCoreReadyResponseCodec],
  ["KVEventsConfig", handshake.KVEventsConfigCodec],
  ["EngineZmqAddresses", handshake.EngineZmqAddressesCodec],
  ["EngineHandshakeMetadata", handshake.EngineHandshakeMetadataCodec],
];

describe("round trips (fast-check)", () => {
  it.each(structs)("%s", (name, codec) => {
    fc.assert(
      fc.property(
        arbitraryFor(codec),
        fc.constantFrom(1, 64, 256, Number.POSITIVE_INFINITY),
        (value, auxThreshold) => {
          const frames = encodeFrames(codec, value, name, { auxThreshold });
          const decoded = decodeFrames(codec, frames, name);
          expect(decoded).toEqual(value);
          expect(hex(encodeFrames(codec, decoded, name, { auxThreshold }))).toEqual(hex(frames));
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("ADD messages through the public API", () => {
    fc.assert(
      fc.property(arbitraryFor(request.EngineCoreRequestCodec), (req) => {
        const frames = encodeAddRequest(req as EngineCoreRequest);
        const m = decodeInputMessage(frames);
        expect(m).toEqual({ type: "add", request: req });
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it("opaque values (encodeValue/decodeValue)", () => {
    fc.assert(
      fc.property(opaque, (v) => {
        const bytes = encodeValue(v);
        expect(decodeValue(bytes)).toEqual(v);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("HELLO/READY status", () => {
    const status = fc.record(
      {
        status: fc.constantFrom("HELLO", "READY"),
        local: fc.boolean(),
        headless: fc.boolean(),
        parallelConfigHash: fc.string(),
      },
      { requiredKeys: ["status", "local", "headless"] },
    );
    fc.assert(
      fc.property(status, (s) => {
        expect(decodeHandshakeStatus(encodeHandshakeStatus(s as HandshakeStatus))).toEqual(s);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });
});

describe("compiled decoders", () => {
  it("match the field-table interpreter (used where code generation is disabled)", () => {
    const codecs = [
      output.EngineCoreOutputsCodec,
      output.EngineCoreOutputCodec,
      request.EngineCoreRequestCodec,
    ] as unknown as StructCodec<unknown, unknown>[];
    for (const codec of codecs) {
      // Same table, compiled decoder removed: decodeArray falls back to the interpreter loop.
      const interpreted = new StructCodec(codec.name, codec.kind, codec.fields, { validate: codec.validate });
      Object.defineProperty(interpreted, "compiled", { value: undefined });
      fc.assert(
        fc.property(arbitraryFor(codec), (value) => {
          const frames = encodeFrames(codec, value, codec.name, { auxThreshold: 64 });
          expect(decodeFrames(interpreted, frames, codec.name)).toEqual(
            decodeFrames(codec, frames, codec.name),
          );
        }),
        { seed: SEED, numRuns: 60 },
      );
    }
  });

  it("map structs: the per-era object builders give what the key-by-key loop gives, keys in the same order", () => {
    const codecs = [
      output.SchedulerStatsCodec,
      output.PrefixCacheStatsCodec,
      output.PrefillStatsCodec,
      output.EngineCoreEventCodec,
      handshake.EngineCoreReadyResponseCodec,
    ] as unknown as StructCodec<unknown, unknown>[];
    for (const codec of codecs) {
      expect(codec.kind).toBe("map");
      // Same table, every era's builder set to null (as without code generation): the generic loop builds.
      const interpreted = new StructCodec(codec.name, codec.kind, codec.allFields, {
        validate: codec.validate,
      });
      Object.defineProperty(interpreted, "mapBuilders", { value: new Array(64).fill(null) });
      // Senders of every version: older ones leave out the newer fields that hold their defaults, so the
      // decoder sees other eras (other key sets).
      fc.assert(
        fc.property(arbitraryFor(codec), fc.constantFrom(...VLLM_VERSIONS), (value, vllmVersion) => {
          const frames = encodeFrames(codec, value, codec.name, { auxThreshold: 64, vllmVersion });
          const built = decodeFrames(codec, frames, codec.name) as Record<string, unknown>;
          const looped = decodeFrames(interpreted, frames, codec.name) as Record<string, unknown>;
          expect(built).toStrictEqual(looped);
          expect(Object.keys(built)).toEqual(Object.keys(looped));
        }),
        { seed: SEED, numRuns: 120 },
      );
    }
  });
});
