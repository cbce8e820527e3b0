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

/**
 * The vLLM versions an engine can be, from its registration, oldest first. Request validation applies
 * the rules of all of them and a utility is refused only when none of them has it, so that a request
 * that could kill the engine is never sent.
 *
 * - A final release string ("0.24.0", "0.25.1") is believed: every final tag from v0.22.0 to v0.25.1
 *   registers with exactly its version's keys. So is the key-less 4-field registration of v0.22.
 * - A release candidate is believed only when the registration's keys agree with it: some rcs are cut
 *   from main and carry the next minor's code (v0.22.1rc0 registers vllm_version and validates
 *   thinking_token_budget like v0.23; v0.23.1rc0 registers the KV cache capacity and rejects a
 *   non-finite temperature like v0.24).
 * - Otherwise (development builds, releases newer than this codec, rcs whose keys disagree) the engine
 *   is at least what its keys show and may be as new as the newest version the codec knows.
 */
export function possibleVersions(registration: EngineCoreReadyResponse): VllmVersion[] {
  const { atLeast, release } = engineVersionOf(registration);
  const reported = registration.vllmVersion;
  const final = reported === undefined || /^v?\d+\.\d+\.\d+$/.test(reported.trim());
  if (release !== undefined && (final || release === atLeast)) return [release];
  return VLLM_VERSIONS.slice(versionRank(atLeast));
}
