// Message framing helpers: type bytes, identities, the dead sentinel, handshake and coordinator payloads.
import { describe, expect, it } from "vitest";
import {
  ENGINE_CORE_DEAD,
  encodeAbortRequest,
  encodeAddRequest,
  encodeCoordinatorPublish,
  encodeFrontendWakeup,
  encodeHandshakeInit,
  encodeHandshakeStatus,
  encodeReadyResponse,
  encodeStartDpWave,
  encodeUtilityCall,
  engineIdentity,
  FinishReason,
  finishReasonName,
  loraRequestValue,
  ProtocolError,
  RequestType,
  VLLM_REVISION,
  withCurrentWave,
} from "../src/index.js";
import {
  decodeCoordinatorPublish,
  decodeFrontendWakeup,
  decodeHandshakeInit,
  decodeHandshakeStatus,
  decodeInputMessage,
  decodeOutputMessage,
  engineIndexFromIdentity,
  FRAME_SHAPES,
  isEngineCoreDead,
} from "./helpers/frame-shapes.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("constants and identities", () => {
  it("pins the vLLM revision", () => {
    expect(VLLM_REVISION).toBe("c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1");
  });

  it("request types and finish reasons match vLLM", () => {
    expect(RequestType).toEqual({
      ADD: 0,
      ABORT: 1,
      START_DP_WAVE: 2,
      UTILITY: 3,
      EXECUTOR_FAILED: 4,
      WAKEUP: 5,
    });
    expect(FinishReason).toEqual({ STOP: 0, LENGTH: 1, ABORT: 2, ERROR: 3, REPETITION: 4 });
    expect([0, 1, 2, 3, 4].map(finishReasonName)).toEqual(["stop", "length", "abort", "error", "repetition"]);
    expect(() => finishReasonName(5)).toThrow(RangeError);
  });

  it("engine identities are 2-byte little-endian", () => {
    expect(hex(engineIdentity(0))).toBe("0000");
    expect(hex(engineIdentity(258))).toBe("0201");
    expect(engineIndexFromIdentity(Uint8Array.of(0xff, 0xff))).toBe(65535);
    expect(() => engineIdentity(65536)).toThrow(RangeError);
    expect(() => engineIdentity(-1)).toThrow(RangeError);
    expect(() => engineIndexFromIdentity(Uint8Array.of(1))).toThrow(ProtocolError);
  });

  it("recognises only the exact ENGINE_CORE_DEAD frame", () => {
    expect(new TextDecoder().decode(ENGINE_CORE_DEAD)).toBe("ENGINE_CORE_DEAD");
    expect(isEngineCoreDead([ENGINE_CORE_DEAD])).toBe(true);
    expect(isEngineCoreDead([ENGINE_CORE_DEAD, new Uint8Array(1)])).toBe(false);
    expect(isEngineCoreDead([ENGINE_CORE_DEAD.subarray(0, 15)])).toBe(false);
    expect(isEngineCoreDead([])).toBe(false);
    const almost = ENGINE_CORE_DEAD.slice();
    almost[15] = 0x45;
    expect(isEngineCoreDead([almost])).toBe(false);
  });
});

describe("input messages", () => {
  it("withCurrentWave stamps the wave into an encoded ADD, byte-identical to encoding it with that wave", () => {
    const request = {
      requestId: "wave-req",
      promptTokenIds: [1, 2, 3],
      samplingParams: { maxTokens: 4 },
      arrivalTime: 1.5,
      priority: 7,
      traceHeaders: { a: "b" },
      promptEmbeds: { dtype: "float32", shape: [80, 4], data: new Float32Array(320) }, // an aux frame
    } as Parameters<typeof encodeAddRequest>[0];
    for (const from of [0, 5, 200]) {
      const encoded = encodeAddRequest({ ...request, currentWave: from });
      expect(encoded.length).toBe(3);
      for (const wave of [0, 1, 127, 128, 65_536, 2 ** 40]) {
        const expected = encodeAddRequest({ ...request, currentWave: wave }).map(hex);
        for (const shape of FRAME_SHAPES) {
          const stamped = withCurrentWave(shape.make(encoded), wave);
          expect(stamped.map(hex), `${shape.name} ${from}→${wave}`).toEqual(expected);
        }
        const decoded = decodeInputMessage(withCurrentWave(encoded, wave));
        expect(decoded.type === "add" && decoded.request.currentWave).toBe(wave);
      }
    }
    expect(() => withCurrentWave(encodeAbortRequest(["a"]), 1)).toThrow(ProtocolError);
    expect(() => withCurrentWave([Uint8Array.of(0), Uint8Array.of(0x93, 0xa1, 0x61, 0xc0, 0xc0)], 1)).toThrow(
      /no current_wave/,
    );
  });

  it("rejects malformed type frames and unknown types", () => {
    expect(() => decodeInputMessage([])).toThrow(/request type frame/);
    expect(() => decodeInputMessage([Uint8Array.of(0, 0), Uint8Array.of(0x90)])).toThrow(ProtocolError);
    expect(() => decodeInputMessage([Uint8Array.of(9), Uint8Array.of(0x90)])).toThrow(
      /unknown request type byte 0x09/,
    );
    expect(() => decodeInputMessage([Uint8Array.of(0)])).toThrow(/no payload frame/);
  });

  it("ABORT and UTILITY framing", () => {
    expect(encodeAbortRequest(["a", "b"]).map(hex)).toEqual(["01", "92a161a162"]);
    expect(() => encodeAbortRequest(["a", 5 as unknown as string])).toThrow(
      /abort request at abort request\[1\]/,
    );
    const frames = encodeUtilityCall({ clientIndex: 1, callId: 9n, method: "sleep", args: [1, "abort"] });
    expect(frames.map(hex)).toEqual(["03", "940109a5736c6565709201a561626f7274"]);
    expect(decodeInputMessage(frames)).toEqual({
      type: "utility",
      call: { clientIndex: 1, callId: 9n, method: "sleep", args: [1, "abort"] },
    });
    expect(() =>
      encodeUtilityCall({ clientIndex: 0, callId: 1, method: "m", args: {} as unknown[] }),
    ).toThrow(/args/);
    expect(() => decodeInputMessage([Uint8Array.of(3), Uint8Array.of(0x93, 0, 1, 0xa1, 0x6d)])).toThrow(
      /got 3 element/,
    );
  });

  it("a LoRARequest utility argument is its positional array, byte-equal to vLLM's frontend", () => {
    // Hex made with msgspec 0.22.0 from the LoRARequest class of vllm/lora/request.py (c67fe497), encoded as
    // core_client.py's _call_utility_async does: encode((client_index, call_id, "add_lora", (lora,))).
    // array_like ignores omit_defaults: all 7 fields are written.
    const python = {
      defaults: "940007a86164645f6c6f72619197a9616461707465722d6103a82f6c6f7261732f61c0c0c2c2",
      everyField:
        "940007a86164645f6c6f72619197a9616461707465722d6204a82f6c6f7261732f62a46261736581a16b01c3c3",
    };
    const defaults = loraRequestValue({ loraName: "adapter-a", loraIntId: 3, loraPath: "/loras/a" });
    expect(defaults).toEqual(["adapter-a", 3, "/loras/a", null, null, false, false]);
    const everyField = loraRequestValue({
      loraName: "adapter-b",
      loraIntId: 4,
      loraPath: "/loras/b",
      baseModelName: "base",
      tensorizerConfigDict: { k: 1 },
      loadInplace: true,
      is3dLoraWeight: true,
    });
    for (const [value, expected] of [
      [defaults, python.defaults],
      [everyField, python.everyField],
    ] as const) {
      const frames = encodeUtilityCall({ clientIndex: 0, callId: 7, method: "add_lora", args: [value] });
      expect(frames.map(hex)).toEqual(["03", expected]);
    }
    // The field table's checks apply (types and LoRARequest.__post_init__), naming the field.
    expect(() => loraRequestValue({ loraName: "a", loraIntId: 0, loraPath: "/p" })).toThrow(ProtocolError);
    expect(() => loraRequestValue({ loraName: "a", loraIntId: 1 })).toThrow(/lora_path/);
    expect(() =>
      loraRequestValue({ loraName: "a", loraIntId: "1" as unknown as number, loraPath: "/p" }),
    ).toThrow(/LoRARequest\.lora_int_id/);
  });

  it("START_DP_WAVE frames", () => {
    expect(encodeStartDpWave({ wave: 3, excludeEngineIndex: 1 }).map(hex)).toEqual(["02", "920301"]);
    expect(encodeStartDpWave({ wave: 4, excludeEngineIndex: null }).map(hex)).toEqual(["02", "9204c0"]);
    expect(decodeInputMessage([Uint8Array.of(2), Uint8Array.of(0x92, 4, 0xc0)])).toEqual({
      type: "start_dp_wave",
      wave: 4,
      excludeEngineIndex: null,
    });
  });
});

describe("output messages", () => {
  it("a non-msgpack frame is a ProtocolError, not a crash", () => {
    expect(() => decodeOutputMessage([new TextEncoder().encode("READY")])).toThrow(ProtocolError);
    expect(() => decodeOutputMessage([])).toThrow(ProtocolError);
  });
});

describe("handshake payloads", () => {
  it("HELLO/READY keys in order status, local, headless[, parallel_config_hash]", () => {
    const hello = encodeHandshakeStatus({ status: "HELLO", local: true, headless: false });
    expect(hex(hello)).toBe("83a6737461747573a548454c4c4fa56c6f63616cc3a8686561646c657373c2");
    const ready = encodeHandshakeStatus({
      status: "READY",
      local: false,
      headless: true,
      parallelConfigHash: "h",
    });
    expect(decodeHandshakeStatus(ready)).toEqual({
      status: "READY",
      local: false,
      headless: true,
      parallelConfigHash: "h",
    });
    expect(() =>
      decodeHandshakeStatus(Uint8Array.of(0x81, 0xa6, ...new TextEncoder().encode("status"), 0xa1, 0x78)),
    ).toThrow(/missing key "local"/);
  });

  it("INIT writes all five address keys (nil when absent)", () => {
    const init = encodeHandshakeInit({
      addresses: { inputs: ["tcp://127.0.0.1:1"], outputs: ["tcp://127.0.0.1:2"] },
      parallelConfig: {},
    });
    const decoded = decodeHandshakeInit(init);
    expect(decoded.addresses).toEqual({
      inputs: ["tcp://127.0.0.1:1"],
      outputs: ["tcp://127.0.0.1:2"],
      coordinatorInput: null,
      coordinatorOutput: null,
      frontendStatsPublishAddress: null,
    });
    expect(hex(init)).toContain(
      "c0be66726f6e74656e645f73746174735f7075626c6973685f61646472657373c0af706172616c6c656c5f636f6e66696780",
    );
  });

  it("ready response requires its required fields on encode", () => {
    expect(() => encodeReadyResponse({ maxModelLen: 1 } as never)).toThrow(
      /missing required field "numGpuBlocks"/,
    );
  });
});

describe("coordinator payloads", () => {
  it("publish [counts, wave, running] with float kv usage", () => {
    const bytes = encodeCoordinatorPublish({
      counts: [
        [0, 0, 0],
        [1, 2, 0.25],
      ],
      wave: 2,
      enginesRunning: true,
    });
    expect(hex(bytes)).toBe("9392930000cb0000000000000000930102cb3fd000000000000002c3");
    expect(decodeCoordinatorPublish(bytes)).toEqual({
      counts: [
        [0, 0, 0],
        [1, 2, 0.25],
      ],
      wave: 2,
      enginesRunning: true,
    });
    expect(hex(encodeCoordinatorPublish({ counts: null, wave: 3, enginesRunning: false }))).toBe("93c003c2");
  });

  it("frontend wake-up [engine, wave] with an index, an identity or nil", () => {
    expect(hex(encodeFrontendWakeup({ engine: 1, wave: 0 }))).toBe("920100");
    expect(hex(encodeFrontendWakeup({ engine: Uint8Array.of(1, 0), wave: 0 }))).toBe("92c402010000");
    expect(decodeFrontendWakeup(Uint8Array.of(0x92, 0xc0, 5))).toEqual({ engine: null, wave: 5 });
  });
});
