// Outputs cross from the runtime worker to the host thread through structured clone (packOutput /
// unpackOutput). Outputs of engines before vLLM main c67fe497 (13-element EngineCoreOutput) have no
// ec_transfer_params: the field must stay absent, not turn into an explicit undefined.
import { decodeOutputMessage, encodeEngineCoreOutputs, Float64 } from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { packOutput, unpackOutput } from "../src/messages.js";

function decodedOutputs(vllmVersion: "0.25" | "main", ecTransferParams?: Record<string, unknown>) {
  const frames = encodeEngineCoreOutputs(
    {
      outputs: [
        {
          requestId: "r-1",
          newTokenIds: [1],
          kvTransferParams: { remote_host: "10.0.0.2", ttl: new Float64(2) },
          ...(ecTransferParams === undefined ? {} : { ecTransferParams }),
        },
      ],
      timestamp: 1,
    },
    { vllmVersion },
  );
  const m = decodeOutputMessage(frames);
  if (m.kind !== "outputs") throw new Error("expected outputs");
  return m.outputs.outputs[0]!;
}

describe("packOutput / unpackOutput", () => {
  it("keep ec_transfer_params absent for outputs of released engines", () => {
    const out = decodedOutputs("0.25");
    expect("ecTransferParams" in out).toBe(false);
    const back = unpackOutput(structuredClone(packOutput(out)));
    expect("ecTransferParams" in back).toBe(false);
    expect(back.kvTransferParams).toEqual({ remote_host: "10.0.0.2", ttl: new Float64(2) });
  });

  it("carry ec_transfer_params of pinned-revision engines", () => {
    const out = decodedOutputs("main", { mm_hash: "h", scale: new Float64(1) });
    const back = unpackOutput(structuredClone(packOutput(out)));
    expect(back.ecTransferParams).toEqual({ mm_hash: "h", scale: new Float64(1) });
  });
});
