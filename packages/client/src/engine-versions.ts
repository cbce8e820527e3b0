// What the client assumes about each connected engine's vLLM version, read from its registration
// (EngineCoreReadyResponse keys and vllm_version, see possibleVersions), and the two decisions taken from
// it before anything is sent: which request rules apply, and whether a utility method exists.
import {
  type EngineCoreReadyResponse,
  possibleVersions,
  utilityAvailable,
  utilityMethod,
  VLLM_VERSIONS,
  type VllmVersion,
  versionRank,
} from "@vllm-engine-core/protocol";
import { UtilityNotAvailableError } from "./errors.js";

export interface EngineVersions {
  readonly index: number;
  readonly reported: string | undefined;
  /** The versions the engine may be (one when its release is known). */
  readonly versions: readonly VllmVersion[];
}

export function engineVersions(
  engines: readonly { index: number; readyResponse: EngineCoreReadyResponse }[],
): EngineVersions[] {
  return engines.map((e) => ({
    index: e.index,
    reported: e.readyResponse.vllmVersion,
    versions: possibleVersions(e.readyResponse),
  }));
}

/**
 * The versions whose request rules apply: a request may go to any engine (the runtime picks one after
 * validation), so it must be valid for every version any engine may be — the most restrictive rules.
 */
export function requestVersions(engines: readonly EngineVersions[]): VllmVersion[] {
  const all = new Set(engines.flatMap((e) => e.versions));
  return VLLM_VERSIONS.filter((v) => all.has(v));
}

/**
 * Throws UtilityNotAvailableError when some engine certainly lacks `method`: the method is listed in
 * UTILITY_METHODS and none of the versions the engine may be has it. A call goes to every engine, so one
 * such engine refuses the whole call. Unlisted names are sent (vLLM resolves them with getattr).
 */
export function checkUtilityAvailable(method: string, engines: readonly EngineVersions[]): void {
  const m = utilityMethod(method);
  if (m === undefined) return;
  for (const e of engines) {
    if (e.versions.every((v) => utilityAvailable(method, v) === false)) {
      throw new UtilityNotAvailableError({
        method,
        engineIndex: e.index,
        reportedVersion: e.reported,
        engineVersions: e.versions,
        // Say which side of the method's span the engine is on.
        since:
          m.since !== undefined && e.versions.every((v) => versionRank(v) < versionRank(m.since!))
            ? m.since
            : undefined,
        until: m.until,
      });
    }
  }
}
