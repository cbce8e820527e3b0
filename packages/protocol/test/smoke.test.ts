// First vector checks: the real-msgspec request/output/handshake vectors round-trip byte for byte.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  decodeHandshakeInit,
  decodeHandshakeStatus,
  decodeInputMessage,
  decodeOutputMessage,
  decodeReadyResponse,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  encodeHandshakeInit,
  encodeHandshakeStatus,
  encodeReadyResponse,
  ProtocolError,
} from "../src/index.js";

interface Vector {
  name: string;
  frames_hex: string[];
}
const vectors: Vector[] = JSON.parse(
  readFileSync(new URL("./vectors/vectors.json", import.meta.url), "utf8"),
).vectors;
const frames = (v: Vector) => v.frames_hex.map((h) => new Uint8Array(Buffer.from(h, "hex")));
const hex = (fs: readonly Uint8Array[]) => fs.map((f) => Buffer.from(f).toString("hex"));
const byName = (name: string) => {
  const v = vectors.find((x) => x.name === name);
  if (!v) throw new Error(`missing vector ${name}`);
  return v;
};

describe("smoke: real msgspec vectors", () => {
  it.each([
    "request.chat_typical_python",
    "request.chat_openai_path_python",
    "request.sampling_defaults_python",
  ])("%s re-encodes byte-identically", (name) => {
    const [, ...msg] = frames(byName(name));
    const decoded = decodeInputMessage(msg);
    expect(decoded.type).toBe("add");
    if (decoded.type !== "add") return;
    expect(hex(encodeAddRequest(decoded.request))).toEqual(hex(msg));
  });

  it.each([
    "output.token_step",
    "output.first_token_with_events_and_prefill_stats",
    "output.sample_logprobs_real",
  ])("%s re-encodes byte-identically", (name) => {
    const msg = frames(byName(name));
    const decoded = decodeOutputMessage(msg);
    if (decoded.kind !== "outputs") throw new Error("expected outputs");
    expect(hex(encodeEngineCoreOutputs(decoded.outputs))).toEqual(hex(msg));
  });

  it("handshake payloads round-trip", () => {
    const hello = frames(byName("handshake.ready_dp_gt1"))[1]!;
    expect(decodeHandshakeStatus(hello)).toEqual({
      status: "READY",
      local: false,
      headless: true,
      parallelConfigHash: "0123456789abcdef",
    });
    expect(hex([encodeHandshakeStatus(decodeHandshakeStatus(hello))])).toEqual(hex([hello]));
    const init = frames(byName("handshake.init_from_rust_frontend"))[1]!;
    expect(hex([encodeHandshakeInit(decodeHandshakeInit(init))])).toEqual(hex([init]));
    const reg = frames(byName("input.registration"))[1]!;
    const ready = decodeReadyResponse(reg);
    expect(ready.maxModelLen).toBe(32768);
    expect(hex([encodeReadyResponse(ready)])).toEqual(hex([reg]));
  });

  it("rejects a truncated output with ProtocolError", () => {
    const msg = frames(byName("output.token_step"))[0]!;
    expect(() => decodeOutputMessage([msg.subarray(0, msg.length - 3)])).toThrow(ProtocolError);
  });
});
