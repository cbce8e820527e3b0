// What an engine's registration frame says about its vLLM version.

import type { EngineCoreReadyResponse } from "../structs/handshake.js";
import { EngineCoreReadyResponseCodec } from "../structs/handshake.js";
import { VLLM_VERSIONS, type VllmVersion, versionFromVllmVersionString, versionRank } from "./versions.js";

export interface EngineVersion {
  /** The oldest version whose registration has every key this one carries (a lower bound). */
  readonly atLeast: VllmVersion;
  /**
   * The release, when known: from `vllm_version` for v0.23 and later releases, or "0.22" for the
   * 4-key registration only v0.22 sends. Undefined for development builds (the wire still tells each
   * message's layout).
   */
  readonly release: VllmVersion | undefined;
}

export function engineVersionOf(registration: EngineCoreReadyResponse): EngineVersion {
  let rank = 0;
  for (const f of EngineCoreReadyResponseCodec.allFields) {
    if (f.since !== undefined && Object.hasOwn(registration, f.key))
      rank = Math.max(rank, versionRank(f.since));
  }
  const atLeast = VLLM_VERSIONS[rank]!;
  const reported = registration.vllmVersion;
  const release =
    reported !== undefined ? versionFromVllmVersionString(reported) : atLeast === "0.22" ? "0.22" : undefined;
  return { atLeast, release };
}
