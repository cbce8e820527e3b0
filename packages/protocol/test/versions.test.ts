// Per-version wire vectors (test/vectors/versions/*.json, built from each vLLM tag's own field lists by
// scripts/gen-version-vectors.py): every vector decodes on Uint8Array, Buffer (pooled) and unaligned
// views to exactly the version's fields and values, re-encodes to the same bytes when the encoder
// targets that version, and its struct layouts equal the codec's field tables at that version.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  compatibilityTable,
  type EngineCoreOutput,
  type EngineCoreRequest,
  encodeAddRequest,
  encodeCoordinatorPublish,
  encodeEngineCoreOutputs,
  encodeHandshakeStatus,
  encodeReadyResponse,
  engineVersionOf,
  Float64,
  MsgpackExt,
  ProtocolError,
  UTILITY_METHODS,
  utilityAvailable,
  VLLM_VERSION_INFO,
  VLLM_VERSIONS,
  type VllmVersion,
  versionFromVllmVersionString,
  WIRE_CHANGES,
} from "../src/index.js";
import { encodeFrames } from "../src/messages/run.js";
import { type AnyCodec, CALL_ID } from "../src/schema/codec.js";
import { StructCodec } from "../src/schema/struct.js";
import { TENSOR, type Tensor } from "../src/schema/tensor.js";
import {
  EngineCoreReadyResponseCodec,
  EngineHandshakeMetadataCodec,
  EngineZmqAddressesCodec,
  HandshakeStatusCodec,
  KVEventsConfigCodec,
} from "../src/structs/handshake.js";
import * as output from "../src/structs/output.js";
import * as request from "../src/structs/request.js";
import * as sampling from "../src/structs/sampling.js";
import { decodersFor, FRAME_SHAPES, type ShapedDecoders } from "./helpers/frame-shapes.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

interface VersionVector {
  name: string;
  kind:
    | "outputs"
    | "scheduler_stats"
    | "registration"
    | "request"
    | "handshake_status"
    | "coordinator_publish";
  version: VllmVersion;
  frames_hex: string[];
  decoded: Json;
  layouts: Record<string, string[]>;
  provenance: { vllm_revision: string; vllm_commit: string; files: Record<string, string> };
}

interface VersionFile {
  about: {
    version: VllmVersion;
    vllm_commit: string;
    engine_methods: string[];
    struct_fields: Record<string, string[]>;
  };
  vectors: VersionVector[];
}

const DIR = join(import.meta.dirname, "vectors", "versions");
const FILES: Record<string, VersionFile> = Object.fromEntries(
  readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f, JSON.parse(readFileSync(join(DIR, f), "utf8")) as VersionFile]),
);
const ALL = Object.values(FILES).flatMap((f) => f.vectors);
const byName = (version: VllmVersion, name: string): VersionVector => {
  const v = ALL.find((x) => x.version === version && x.name === name);
  if (v === undefined) throw new Error(`no vector ${name} for ${version}`);
  return v;
};
const fromHex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));
const hex = (frames: readonly Uint8Array[]) => frames.map((f) => Buffer.from(f).toString("hex"));

// Every decode runs on the shared helper's frame shapes (Uint8Array, pooled and own Buffers, offsets 1–7);
// `EVERY_SHAPE` also checks that all shapes agree, `decodersFor([shape])` runs one shape for a per-shape test.
const EVERY_SHAPE = decodersFor(FRAME_SHAPES);

// --- decoded TS value → wire-named JSON view (exactly the keys present) -------------------------------

function toWire(codec: AnyCodec, value: unknown, path: string): Json {
  if (value === null) return null;
  if (value === undefined) throw new Error(`${path}: undefined in a decoded value`);
  if (codec.nullable && codec.inner !== undefined) return toWire(codec.inner, value, path);
  if (codec === output.UtilityResultCodec) {
    // Not a Struct in vLLM: MsgpackEncoder writes UtilityResult as the pair (type_info, value).
    const r = value as output.UtilityResult;
    return [opaque(r.typeInfo, `${path}[0]`), opaque(r.value, `${path}[1]`)];
  }
  if (codec === TENSOR) {
    // numpy arrays / torch tensors: the vector lists the elements in C order.
    const t = value as Tensor;
    return { dtype: t.dtype, shape: t.shape, data: Array.from(t.data as ArrayLike<number | bigint>, Number) };
  }
  if (codec instanceof StructCodec) {
    const obj = value as Record<string, unknown>;
    const out: Record<string, Json> = {};
    const known = new Set(codec.allFields.map((f) => f.key));
    for (const k of Object.keys(obj)) if (!known.has(k)) throw new Error(`${path}: unknown key ${k}`);
    for (const f of codec.allFields) {
      if (Object.hasOwn(obj, f.key)) out[f.wire] = toWire(f.codec, obj[f.key], `${path}.${f.wire}`);
    }
    return out;
  }
  if (codec === CALL_ID) return Number(value as bigint);
  if (codec.element !== undefined) {
    return (value as unknown[]).map((x, i) => toWire(codec.element!, x, `${path}[${i}]`));
  }
  if (codec.values !== undefined) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, x]) => [
        k,
        toWire(codec.values!, x, `${path}.${k}`),
      ]),
    );
  }
  if (codec.label === "Any" || codec.label === "dict") return opaque(value, path);
  return value as Json;
}

function opaque(value: unknown, path: string): Json {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return value;
  if (value instanceof Float64) return value.value;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) return { bin: Buffer.from(value).toString("hex") };
  if (value instanceof MsgpackExt) throw new Error(`${path}: unexpected ext`);
  if (Array.isArray(value)) return value.map((x, i) => opaque(x, `${path}[${i}]`));
  if (value instanceof Map)
    return Object.fromEntries([...value].map(([k, x]) => [String(k), opaque(x, path)]));
  return Object.fromEntries(Object.entries(value as object).map(([k, x]) => [k, opaque(x, `${path}.${k}`)]));
}

// --- per-kind decode / encode ------------------------------------------------------------------------

function decodeVector(
  v: VersionVector,
  frames: Uint8Array[],
  d: ShapedDecoders = EVERY_SHAPE,
): { view: Json; value: unknown } {
  switch (v.kind) {
    case "outputs": {
      const m = d.decodeOutputMessage(frames);
      if (m.kind !== "outputs") throw new Error("expected outputs");
      return {
        value: m.outputs,
        view: toWire(output.EngineCoreOutputsCodec, m.outputs, "EngineCoreOutputs"),
      };
    }
    case "scheduler_stats": {
      const s = d.decodeFrames(output.SchedulerStatsCodec, frames, "SchedulerStats");
      return { value: s, view: toWire(output.SchedulerStatsCodec, s, "SchedulerStats") };
    }
    case "registration": {
      const r = d.decodeReadyResponse(frames[0]!);
      return { value: r, view: toWire(EngineCoreReadyResponseCodec, r, "EngineCoreReadyResponse") };
    }
    case "request": {
      const m = d.decodeInputMessage(frames);
      if (m.type !== "add") throw new Error("expected an ADD");
      return {
        value: m.request,
        view: toWire(request.EngineCoreRequestCodec, m.request, "EngineCoreRequest"),
      };
    }
    case "handshake_status": {
      const h = d.decodeHandshakeStatus(frames[0]!);
      return { value: h, view: toWire(HandshakeStatusCodec, h, "HandshakeStatus") };
    }
    case "coordinator_publish": {
      const p = d.decodeCoordinatorPublish(frames[0]!);
      return {
        value: p,
        view: { counts: p.counts, wave: p.wave, engines_running: p.enginesRunning } as Json,
      };
    }
  }
}

function encodeVector(v: VersionVector, value: unknown): Uint8Array[] {
  const vllmVersion = v.version;
  switch (v.kind) {
    case "outputs":
      return encodeEngineCoreOutputs(value as Parameters<typeof encodeEngineCoreOutputs>[0], { vllmVersion });
    case "scheduler_stats":
      return encodeFrames(output.SchedulerStatsCodec, value as output.SchedulerStatsInit, "SchedulerStats", {
        vllmVersion,
      });
    case "registration":
      return [encodeReadyResponse(value as Parameters<typeof encodeReadyResponse>[0], { vllmVersion })];
    case "request":
      return encodeAddRequest(value as EngineCoreRequest, { vllmVersion });
    case "handshake_status":
      return [encodeHandshakeStatus(value as Parameters<typeof encodeHandshakeStatus>[0])];
    case "coordinator_publish":
      return [encodeCoordinatorPublish(value as Parameters<typeof encodeCoordinatorPublish>[0])];
  }
}

/** Struct name → the codec whose table must equal the tag's field list. */
const CODECS: Record<string, StructCodec<unknown, unknown>> = Object.fromEntries(
  [
    output.EngineCoreOutputsCodec,
    output.EngineCoreOutputCodec,
    output.EngineCoreEventCodec,
    output.LogprobsListsCodec,
    output.LogprobsTensorsCodec,
    output.UtilityOutputCodec,
    output.SchedulerStatsCodec,
    output.SchedulerIterationDetailsCodec,
    output.PrefixCacheStatsCodec,
    output.PrefillStatsCodec,
    output.SpecDecodingStatsCodec,
    EngineCoreReadyResponseCodec,
    KVEventsConfigCodec,
    request.EngineCoreRequestCodec,
    sampling.SamplingParamsCodec,
  ].map((c) => [c.name, c as unknown as StructCodec<unknown, unknown>]),
);
/** Structs the codec keeps opaque (decoded as plain values), so they have no field table. */
const OPAQUE = new Set(["KVCacheEvictionEvent", "CUDAGraphStat", "PerfStats"]);
/** Codec tables for the other structs each version file lists (BaseCacheStats is PrefixCacheStats' base). */
const MORE_CODECS: Record<string, StructCodec<unknown, unknown>> = Object.fromEntries(
  [
    request.LoRARequestCodec,
    request.PoolingParamsCodec,
    request.LateInteractionParamsCodec,
    request.MultiModalFeatureSpecCodec,
    request.PlaceholderRangeCodec,
    sampling.StructuredOutputsParamsCodec,
    sampling.RepetitionDetectionParamsCodec,
    EngineZmqAddressesCodec,
    EngineHandshakeMetadataCodec,
  ].map((c) => [c.name, c as unknown as StructCodec<unknown, unknown>]),
);

// --- tests ---------------------------------------------------------------------------------------------

describe("per-version vectors", () => {
  it("cover v0.22.1, v0.23.0, v0.24.0, v0.25.1, the pin and main after it", () => {
    expect(Object.keys(FILES).sort()).toEqual(
      [
        "main-c67fe497a.json",
        "next-58d3918e3.json",
        "v0.22.1.json",
        "v0.23.0.json",
        "v0.24.0.json",
        "v0.25.1.json",
      ].sort(),
    );
    for (const f of Object.values(FILES)) {
      expect(f.about.vllm_commit).toBe(VLLM_VERSION_INFO[f.about.version].commit);
      const kinds = new Set(f.vectors.map((v) => v.kind));
      expect([...kinds].sort()).toEqual(
        [
          "coordinator_publish",
          "handshake_status",
          "outputs",
          "registration",
          "request",
          "scheduler_stats",
        ].sort(),
      );
    }
  });

  describe.each(ALL.map((v) => [`${v.version} ${v.name}`, v] as const))("%s", (_label, v) => {
    const frames = v.frames_hex.map(fromHex);

    it.each(FRAME_SHAPES.map((shape) => [shape.name, shape] as const))(
      "decodes from %s to exactly the version's fields and values",
      (_name, shape) => {
        expect(decodeVector(v, frames, decodersFor([shape])).view).toStrictEqual(v.decoded);
      },
    );

    it("re-encodes to the same bytes in the version's layout", () => {
      const { value } = decodeVector(v, frames);
      expect(hex(encodeVector(v, value))).toEqual(v.frames_hex);
    });

    it("has the codec's field tables as the tag declares them", () => {
      for (const [struct, wires] of Object.entries(v.layouts)) {
        if (struct === "EngineLoadCounts") continue; // not a struct: see the coordinator test below
        if (struct === "HandshakeStatus") {
          expect(HandshakeStatusCodec.allFields.map((f) => f.wire).slice(0, wires.length)).toEqual(wires);
          continue;
        }
        if (OPAQUE.has(struct)) continue;
        const codec = CODECS[struct];
        expect(codec, `a codec for ${struct}`).toBeDefined();
        expect(
          codec!.fieldsAt(v.version).map((f) => f.wire),
          `${struct} at ${v.version}`,
        ).toEqual(wires);
      }
    });
  });
});

describe("field tables", () => {
  it.each(Object.values(FILES).map((f) => [f.about.version, f] as const))(
    "equal every struct as vLLM %s declares it",
    (version, f) => {
      for (const [struct, wires] of Object.entries(f.about.struct_fields)) {
        if (OPAQUE.has(struct) || struct === "BaseCacheStats") continue;
        const codec = CODECS[struct] ?? MORE_CODECS[struct];
        expect(codec, `a codec for ${struct}`).toBeDefined();
        expect(
          codec!.fieldsAt(version).map((x) => x.wire),
          `${struct} at ${version}`,
        ).toEqual(wires);
      }
      // The base dataclass's fields come first in PrefixCacheStats (msgspec follows __dataclass_fields__).
      expect(f.about.struct_fields.PrefixCacheStats!.slice(0, 4)).toEqual(
        f.about.struct_fields.BaseCacheStats,
      );
    },
  );
});

describe("layout chosen from the wire", () => {
  const released: VllmVersion[] = ["0.22", "0.23", "0.24", "0.25"];

  it.each(released)(
    "v%s: 13-element outputs decode with ec_transfer_params absent and no field shifted",
    (ver) => {
      const m = EVERY_SHAPE.decodeOutputMessage(byName(ver, "outputs.step").frames_hex.map(fromHex));
      if (m.kind !== "outputs") throw new Error("expected outputs");
      const [first, running, finished] = m.outputs.outputs as [
        EngineCoreOutput,
        EngineCoreOutput,
        EngineCoreOutput,
      ];
      for (const o of [first, running, finished]) expect("ecTransferParams" in o).toBe(false);
      expect(first.traceHeaders).toEqual({
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      });
      expect(first.prefillStats).toStrictEqual({
        numPromptTokens: 9,
        numComputedTokens: 5,
        numCachedTokens: 4,
        numLocalCachedTokens: 4,
        numExternalCachedTokens: 0,
      });
      expect(first.routedExperts).toBeNull();
      expect(running.numNansInLogits).toBe(2);
      expect(running.routedExperts).toBeNull();
      expect(finished.finishReason).toBe(0);
      expect(finished.kvTransferParams).toEqual({
        do_remote_prefill: false,
        remote_block_ids: [1, 2, 3],
        remote_host: "10.0.0.2",
      });
    },
  );

  it("14-element outputs (the pin) carry ec_transfer_params at index 9", () => {
    const m = EVERY_SHAPE.decodeOutputMessage(byName("main", "outputs.step").frames_hex.map(fromHex));
    if (m.kind !== "outputs") throw new Error("expected outputs");
    const running = m.outputs.outputs[1]!;
    expect(running.ecTransferParams).toEqual({ mm_hash: "img-7f3a", encoder_output_len: 576 });
    expect(running.numNansInLogits).toBe(2);
    expect(m.outputs.outputs[0]!.prefillStats?.numCacheCreationTokens).toBe(3);
  });

  it("registration frames of every version decode; fields the engine lacks are absent, not invented", () => {
    const r22 = EVERY_SHAPE.decodeReadyResponse(
      fromHex(byName("0.22", "registration.typical").frames_hex[0]!),
    );
    expect(r22).toStrictEqual({
      maxModelLen: 8192,
      numGpuBlocks: 27000,
      dpStatsAddress: null,
      dtype: "bfloat16",
    });
    const r25 = EVERY_SHAPE.decodeReadyResponse(
      fromHex(byName("0.25", "registration.typical").frames_hex[0]!),
    );
    expect(r25.worldSize).toBe(1);
    expect(r25.kvCacheSizeTokens).toBe(432000);
    expect("tensorParallelSize" in r25).toBe(false);
    expect("kvEventsConfig" in r25).toBe(false);
  });

  it("a frame of a known version missing a field that version requires is still rejected", () => {
    // v0.24 keys (world_size present) without data_parallel_size: not something any v0.24 engine sends.
    const r24 = EVERY_SHAPE.decodeReadyResponse(
      fromHex(byName("0.24", "registration.typical").frames_hex[0]!),
    );
    const { dataParallelSize: _dropped, ...rest } = r24;
    const broken = encodeReadyResponse(rest, { vllmVersion: "0.22" });
    expect(() => EVERY_SHAPE.decodeReadyResponse(broken)).toThrow(
      /missing required field "data_parallel_size"/,
    );
  });

  it("the engine's vllm_version names its release", () => {
    const reported = (["0.23", "0.24", "0.25", "main"] as const).map(
      (ver) =>
        EVERY_SHAPE.decodeReadyResponse(fromHex(byName(ver, "registration.typical").frames_hex[0]!))
          .vllmVersion!,
    );
    expect(reported.map(versionFromVllmVersionString)).toEqual(["0.23", "0.24", "0.25", undefined]);
    expect(versionFromVllmVersionString("0.23.1rc0")).toBe("0.23");
    expect(versionFromVllmVersionString("0.26.0.dev12+gc67fe497a")).toBeUndefined();
  });

  it("the registration frame gives the engine's version: a lower bound from its keys, the release when known", () => {
    const of = (ver: VllmVersion, name = "registration.typical") =>
      engineVersionOf(EVERY_SHAPE.decodeReadyResponse(fromHex(byName(ver, name).frames_hex[0]!)));
    expect(of("0.22")).toEqual({ atLeast: "0.22", release: "0.22" });
    expect(of("0.23")).toEqual({ atLeast: "0.23", release: "0.23" });
    expect(of("0.24")).toEqual({ atLeast: "0.24", release: "0.24" });
    expect(of("0.25")).toEqual({ atLeast: "0.24", release: "0.25" });
    expect(of("main")).toEqual({ atLeast: "main", release: undefined });
    expect(of("main", "registration.dp_rank1_kv_events")).toEqual({ atLeast: "main", release: undefined });
  });

  it("stats maps without the newer keys leave them absent", () => {
    const s = EVERY_SHAPE.decodeFrames(
      output.SchedulerStatsCodec,
      [fromHex(byName("0.22", "stats.scheduler_stats").frames_hex[0]!)],
      "SchedulerStats",
    );
    expect("iterationDetails" in s).toBe(false);
    expect(s.specDecodingStats).toStrictEqual({
      numSpecTokens: 3,
      numDrafts: 2,
      numDraftTokens: 6,
      numAcceptedTokens: 4,
      numAcceptedTokensPerPos: [2, 1, 1],
    });
    const main = EVERY_SHAPE.decodeFrames(
      output.SchedulerStatsCodec,
      [fromHex(byName("main", "stats.scheduler_stats").frames_hex[0]!)],
      "SchedulerStats",
    );
    expect(main.iterationDetails?.elapsedMs).toBe(12.5);
    expect(main.specDecodingStats?.numDraftTokensPerPos).toEqual([2, 2, 2]);
  });

  it("coordinator counts of released coordinators have no kv_cache_usage", () => {
    const old = EVERY_SHAPE.decodeCoordinatorPublish(
      fromHex(byName("0.25", "coordinator.publish_counts").frames_hex[0]!),
    );
    expect(old.counts).toStrictEqual([
      [2, 1],
      [0, 3],
    ]);
    const pin = EVERY_SHAPE.decodeCoordinatorPublish(
      fromHex(byName("main", "coordinator.publish_counts").frames_hex[0]!),
    );
    expect(pin.counts).toStrictEqual([
      [2, 1, 0.25],
      [0, 3, 0.5],
    ]);
  });
});

describe("encoding for a version", () => {
  const chat = () => {
    const m = EVERY_SHAPE.decodeInputMessage(byName("main", "request.chat").frames_hex.map(fromHex));
    if (m.type !== "add") throw new Error("expected an ADD");
    return m.request;
  };

  it("session_id is appended only when set; the pin's 20-element request is unchanged", () => {
    const req = chat();
    expect(hex(encodeAddRequest(req))).toEqual(byName("main", "request.chat").frames_hex);
    expect(hex(encodeAddRequest({ ...req, sessionId: "session-42" }))).toEqual(
      byName("next", "request.chat_with_session").frames_hex,
    );
    // A v0.22 engine gets the same 21 elements: its msgspec skips the extra trailing one.
    expect(hex(encodeAddRequest({ ...req, sessionId: "session-42" }, { vllmVersion: "0.22" }))).toEqual(
      byName("next", "request.chat_with_session").frames_hex,
    );
  });

  it("a request with extra trailing elements decodes (newer frontends append fields)", () => {
    const frames = byName("next", "request.chat_with_session").frames_hex.map(fromHex);
    const payload = frames[1]!;
    // dc 00 15 → dc 00 16 and one more element (a str) at the end.
    const longer = new Uint8Array([
      ...payload.subarray(0, 2),
      0x16,
      ...payload.subarray(3),
      0xa3,
      0x61,
      0x62,
      0x63,
    ]);
    const m = EVERY_SHAPE.decodeInputMessage([frames[0]!, longer]);
    expect(m.type === "add" && m.request.sessionId).toBe("session-42");
  });

  it("ec_transfer_params cannot be sent in the 13-element layout; null is dropped", () => {
    const m = EVERY_SHAPE.decodeOutputMessage(byName("main", "outputs.step").frames_hex.map(fromHex));
    if (m.kind !== "outputs") throw new Error("expected outputs");
    expect(() => encodeEngineCoreOutputs(m.outputs, { vllmVersion: "0.25" })).toThrow(ProtocolError);
    expect(() => encodeEngineCoreOutputs(m.outputs, { vllmVersion: "0.25" })).toThrow(/ec_transfer_params/);
    const withoutEc = {
      ...m.outputs,
      outputs: m.outputs.outputs.map((o) => ({ ...o, ecTransferParams: null })),
    };
    const frames = encodeEngineCoreOutputs(withoutEc, { vllmVersion: "0.25" });
    const again = EVERY_SHAPE.decodeOutputMessage(frames);
    expect(again.kind === "outputs" && again.outputs.outputs.every((o) => !("ecTransferParams" in o))).toBe(
      true,
    );
  });

  it("rejects an unknown version id", () => {
    expect(() => encodeAddRequest(chat(), { vllmVersion: "0.99" as VllmVersion })).toThrow(
      /unknown vllmVersion/,
    );
  });
});

describe("version registries", () => {
  const structs = [
    ...Object.values(CODECS),
    request.LoRARequestCodec,
    request.PoolingParamsCodec,
    sampling.StructuredOutputsParamsCodec,
  ] as StructCodec<unknown, unknown>[];

  it("every field with `since` has its upstream change in WIRE_CHANGES, and the other way round", () => {
    const fromTables = structs.flatMap((c) =>
      c.allFields.filter((f) => f.since !== undefined).map((f) => `${c.name}.${f.wire}@${f.since}`),
    );
    const fromRegistry = WIRE_CHANGES.filter((c) => c.kind === "field").flatMap((c) =>
      c.fields!.map((f) => `${c.subject}.${f}@${c.since}`),
    );
    expect(fromTables.sort()).toEqual(fromRegistry.sort());
  });

  it("utility availability matches each tag's EngineCore methods", () => {
    for (const f of Object.values(FILES)) {
      for (const m of UTILITY_METHODS) {
        if (m.owner === "input thread") continue; // intercepted by process_input_sockets, not a method
        expect(utilityAvailable(m.name, f.about.version), `${m.name} at ${f.about.version}`).toBe(
          f.about.engine_methods.includes(m.name),
        );
      }
    }
    expect(utilityAvailable("no_such_method", "main")).toBeUndefined();
  });

  it("the compatibility table's layout rows equal the tags' field counts", () => {
    const table = compatibilityTable();
    expect(table.columns.map((c) => c.id)).toEqual([...VLLM_VERSIONS]);
    for (const f of Object.values(FILES)) {
      const col = VLLM_VERSIONS.indexOf(f.about.version);
      for (const v of f.vectors) {
        for (const [struct, wires] of Object.entries(v.layouts)) {
          const row = table.rows.find((r) => r.section === "layout" && r.feature.startsWith(`${struct}:`));
          if (row !== undefined)
            expect(row.cells[col], `${struct} at ${f.about.version}`).toBe(String(wires.length));
        }
      }
    }
    const ec = table.rows.find((r) => r.feature === "EngineCoreOutput.ec_transfer_params [index 9]");
    expect(ec?.cells).toEqual(["—", "—", "—", "—", "✔", "✔"]);
    expect(ec?.ref).toBe("#42433 (8df14cfc8)");
  });
});
