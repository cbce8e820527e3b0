// vLLM version support: version ids, the wire-change registry, utility availability, and the
// compatibility table generated from the struct field tables.
export { WIRE_CHANGES, type WireChange, type WireChangeKind } from "./changes.js";
export {
  type CompatibilityRow,
  type CompatibilitySection,
  type CompatibilityTable,
  compatibilityMarkdown,
  compatibilityTable,
  withCompatibilityTable,
} from "./compat.js";
export { type EngineVersion, engineVersionOf, possibleVersions } from "./engine.js";
export { UTILITY_METHODS, type UtilityMethod, utilityAvailable, utilityMethod } from "./utilities.js";
export {
  isVllmVersion,
  PINNED_VERSION,
  VLLM_VERSION_INFO,
  VLLM_VERSIONS,
  type VllmVersion,
  type VllmVersionInfo,
  versionFromVllmVersionString,
  versionHas,
  versionRank,
} from "./versions.js";
