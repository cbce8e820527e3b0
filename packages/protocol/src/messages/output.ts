// Output socket (engine PUSH → frontend PULL): `[EngineCoreOutputs, ...aux]` or the ENGINE_CORE_DEAD sentinel.
import {
  type EngineCoreOutputs,
  EngineCoreOutputsCodec,
  type EngineCoreOutputsInit,
} from "../structs/output.js";
import { isEngineCoreDead } from "./identity.js";
import { decodeFrames, type EncodeOptions, encodeFrames } from "./run.js";

export type OutputMessage = { kind: "dead" } | { kind: "outputs"; outputs: EngineCoreOutputs };

export function decodeOutputMessage(frames: readonly Uint8Array[]): OutputMessage {
  if (isEngineCoreDead(frames)) return { kind: "dead" };
  return { kind: "outputs", outputs: decodeEngineCoreOutputs(frames) };
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
