// Output socket (engine PUSH → frontend PULL): `[EngineCoreOutputs, ...aux]` or the ENGINE_CORE_DEAD sentinel.
import { ProtocolError } from "../errors/classes.js";
import {
  type EngineCoreOutputs,
  EngineCoreOutputsCodec,
  type EngineCoreOutputsInit,
} from "../structs/output.js";
import { isEngineCoreDead } from "./identity.js";
import { decodeFrames, type EncodeOptions, encodeFrames } from "./run.js";

export type OutputMessage = { kind: "dead" } | { kind: "outputs"; outputs: EngineCoreOutputs };

/**
 * An output-socket message: the sentinel, or an EngineCoreOutputs of a shape vLLM sends (see
 * `outputShapeProblem`); anything else throws a ProtocolError.
 */
export function decodeOutputMessage(frames: readonly Uint8Array[]): OutputMessage {
  if (isEngineCoreDead(frames)) return { kind: "dead" };
  const outputs = decodeEngineCoreOutputs(frames);
  checkOutputShape(outputs);
  return { kind: "outputs", outputs };
}

/** Throws the ProtocolError of a decoded EngineCoreOutputs whose shape vLLM never sends. */
export function checkOutputShape(outputs: EngineCoreOutputs): void {
  const problem = outputShapeProblem({
    requests:
      outputs.outputs.length > 0 || outputs.schedulerStats !== null || outputs.finishedRequests !== null,
    utility: outputs.utilityOutput !== null,
    waveComplete: outputs.waveComplete !== null,
    startWave: outputs.startWave !== null,
  });
  if (problem !== undefined) throw new ProtocolError({ struct: "EngineCoreOutputs", ...problem });
}

/** The parts of an EngineCoreOutputs message that vLLM never combines. */
export interface OutputMessageParts {
  /** `outputs` non-empty, `scheduler_stats` or `finished_requests` set: a step's request batch. */
  requests: boolean;
  utility: boolean;
  waveComplete: boolean;
  startWave: boolean;
}

/**
 * Why a message combines parts vLLM sends separately, or undefined. vLLM's engine builds a utility reply, a
 * wave_complete and a start_wave each as an EngineCoreOutputs of its own (EngineCoreProc._handle_client_request,
 * DPEngineCoreProc in vllm/v1/engine/core.py) and request outputs, finished ids and stats as the step's batch
 * (Scheduler.update_from_output); its Rust client rejects any other combination as an invalid wire shape
 * (rust/src/engine-core-client/src/protocol/output.rs, TryFrom<WireEngineCoreOutputs>). A message with none
 * of them is accepted here (nothing to deliver), where the Rust client rejects it too.
 */
export function outputShapeProblem(parts: OutputMessageParts): { field: string; detail: string } | undefined {
  const present: { field: string; what: string }[] = [];
  if (parts.requests)
    present.push({
      field: "outputs",
      what: "request outputs (outputs, finished_requests or scheduler_stats)",
    });
  if (parts.utility) present.push({ field: "utility_output", what: "a utility reply" });
  if (parts.waveComplete) present.push({ field: "wave_complete", what: "a wave_complete notice" });
  if (parts.startWave) present.push({ field: "start_wave", what: "a start_wave notice" });
  if (present.length < 2) return undefined;
  return {
    field: `EngineCoreOutputs.${present[1]!.field}`,
    detail: `${present.map((p) => p.what).join(" and ")} in one message, a shape vLLM never sends (each goes in a message of its own)`,
  };
}

export function decodeEngineCoreOutputs(frames: readonly Uint8Array[]): EngineCoreOutputs {
  return decodeFrames(EngineCoreOutputsCodec, frames, "EngineCoreOutputs");
}

/** Encode as the engine does: `[main, ...aux]`. */
export function encodeEngineCoreOutputs(
  outputs: EngineCoreOutputsInit,
  options?: EncodeOptions,
): Uint8Array[] {
  return encodeFrames(EngineCoreOutputsCodec, outputs, "EngineCoreOutputs", options);
}
