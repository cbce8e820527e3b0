// The codec's one error, ProtocolError: its messages, and its trip across a thread (it registers itself with
// the family's registry, @vllm-engine-core/errors, when the codec loads). The rest of the family is tested
// where it is exported to users: packages/client/test/error-family.test.ts.
import { deserializeError, serializeError, VllmEngineCoreError } from "@vllm-engine-core/errors";
import * as protocol from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../src/index.js";

describe("ProtocolError", () => {
  it("messages name the struct, field and a remedy", () => {
    const err = new ProtocolError({
      struct: "EngineCoreRequest",
      field: "EngineCoreRequest.priority",
      detail: "expected int, got str",
    });
    expect(err.message).toMatch(
      /Cannot decode EngineCoreRequest at EngineCoreRequest\.priority: expected int, got str/,
    );
    expect(err.message).toMatch(/c67fe497/);
    const enc = new ProtocolError({ struct: "EngineCoreRequest", detail: "x", direction: "encode" });
    expect(enc.message).toMatch(/Cannot encode EngineCoreRequest: x\. Fix the value/);
  });

  it("extends the family's base and crosses a thread as itself, found by its code", () => {
    const err = new ProtocolError({ struct: "EngineCoreOutputs", detail: "bad", engineIndex: 1 });
    expect(err).toBeInstanceOf(VllmEngineCoreError);
    expect(ProtocolError.code).toBe("PROTOCOL_ERROR");
    expect(err.code).toBe(ProtocolError.code);
    const back = deserializeError(structuredClone(serializeError(err)));
    expect(back).toBeInstanceOf(ProtocolError);
    expect(back).toMatchObject({
      name: "ProtocolError",
      code: "PROTOCOL_ERROR",
      engineIndex: 1,
      detail: "bad",
    });
  });

  it("exports none of the runtime's thread internals", () => {
    for (const name of ["RUNTIME_WORKER_MARKER", "RUNTIME_PROTOCOL_VERSION", "PINNED_VLLM_COMMIT"]) {
      expect(Object.keys(protocol)).not.toContain(name);
    }
  });
});
