// Engine routing identities and fixed frames.
import { ProtocolError } from "../errors/classes.js";

/** The 16-byte sentinel an engine pushes on its output sockets when it dies. */
export const ENGINE_CORE_DEAD: Uint8Array = new TextEncoder().encode("ENGINE_CORE_DEAD");

/** True for the ENGINE_CORE_DEAD sentinel message (checked before any msgpack decoding). */
export function isEngineCoreDead(frames: readonly Uint8Array[]): boolean {
  const f = frames[0];
  if (frames.length !== 1 || f === undefined || f.byteLength !== ENGINE_CORE_DEAD.byteLength) return false;
  for (let i = 0; i < f.byteLength; i++) if (f[i] !== ENGINE_CORE_DEAD[i]) return false;
  return true;
}

/** `engine_index.to_bytes(2, "little")`. */
export function engineIdentity(engineIndex: number): Uint8Array {
  if (!Number.isInteger(engineIndex) || engineIndex < 0 || engineIndex > 0xffff) {
    throw new RangeError(`engine index must be an integer in 0..65535, got ${engineIndex}`);
  }
  return Uint8Array.of(engineIndex & 0xff, engineIndex >> 8);
}

export function engineIndexFromIdentity(identity: Uint8Array): number {
  if (identity.byteLength !== 2) {
    throw new ProtocolError({
      struct: "engine identity",
      detail: `expected a 2-byte little-endian engine index, got ${identity.byteLength} byte(s)`,
    });
  }
  return identity[0]! | (identity[1]! << 8);
}

/** Request type bytes of the input socket (EngineCoreRequestType). */
export const RequestType = {
  ADD: 0,
  ABORT: 1,
  START_DP_WAVE: 2,
  UTILITY: 3,
  EXECUTOR_FAILED: 4,
  WAKEUP: 5,
} as const;
export type RequestType = (typeof RequestType)[keyof typeof RequestType];

export const REQUEST_TYPE_FRAMES: Readonly<Record<RequestType, Uint8Array>> = {
  0: Uint8Array.of(0),
  1: Uint8Array.of(1),
  2: Uint8Array.of(2),
  3: Uint8Array.of(3),
  4: Uint8Array.of(4),
  5: Uint8Array.of(5),
};
