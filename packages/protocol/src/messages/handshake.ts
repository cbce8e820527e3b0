// Handshake socket payloads and the input-socket registration (single frames; identities are the socket owner's job).
import { fail } from "../msgpack/fault.js";
import {
  type EngineCoreReadyResponse,
  EngineCoreReadyResponseCodec,
  type EngineCoreReadyResponseInit,
  type EngineHandshakeMetadata,
  EngineHandshakeMetadataCodec,
  type EngineHandshakeMetadataInit,
  type HandshakeStatus,
  HandshakeStatusCodec,
} from "../structs/handshake.js";
import type { VllmVersion } from "../versions/versions.js";
import { decodeCustom, decodeFrames, encodeSingle } from "./run.js";

/** HELLO / READY (engine → frontend): dict `{status, local, headless[, parallel_config_hash]}`. */
export function encodeHandshakeStatus(msg: HandshakeStatus): Uint8Array {
  return encodeSingle(
    HandshakeStatusCodec,
    {
      status: msg.status,
      local: msg.local,
      headless: msg.headless,
      parallelConfigHash: msg.parallelConfigHash,
    },
    "HandshakeStatus",
  );
}

export function decodeHandshakeStatus(payload: Uint8Array): HandshakeStatus {
  return decodeCustom([payload], "HandshakeStatus", (r) => {
    const v = HandshakeStatusCodec.decode(r);
    if (v.status === undefined) fail('missing key "status"');
    if (v.local === undefined) fail('missing key "local"');
    if (v.headless === undefined) fail('missing key "headless"');
    const out: HandshakeStatus = { status: v.status, local: v.local, headless: v.headless };
    if (v.parallelConfigHash !== undefined) out.parallelConfigHash = v.parallelConfigHash;
    return out;
  });
}

/** INIT (frontend → engine): EngineHandshakeMetadata. */
export function encodeHandshakeInit(meta: EngineHandshakeMetadataInit): Uint8Array {
  return encodeSingle(EngineHandshakeMetadataCodec, meta, "EngineHandshakeMetadata");
}

export function decodeHandshakeInit(payload: Uint8Array): EngineHandshakeMetadata {
  return decodeFrames(EngineHandshakeMetadataCodec, [payload], "EngineHandshakeMetadata");
}

/**
 * Input-socket registration (engine → frontend ROUTER): EngineCoreReadyResponse, with the keys of
 * `vllmVersion`'s dataclass (default: the pinned revision's 18).
 */
export function encodeReadyResponse(
  r: EngineCoreReadyResponseInit,
  options?: { vllmVersion?: VllmVersion },
): Uint8Array {
  return encodeSingle(EngineCoreReadyResponseCodec, r, "EngineCoreReadyResponse", options?.vllmVersion);
}

export function decodeReadyResponse(payload: Uint8Array): EngineCoreReadyResponse {
  return decodeFrames(EngineCoreReadyResponseCodec, [payload], "EngineCoreReadyResponse");
}
