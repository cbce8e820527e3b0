// Which vLLM the mock plays (--vllm-version): a release line v0.22–v0.25 or the pinned main revision.
// Every behaviour that differs between them is looked up here, from the protocol's registry of wire
// differences (WIRE_CHANGES, UTILITY_METHODS), so the mock and the codec's compatibility table name the
// same versions; each entry below also cites the vLLM code it models, read at each tag.
import {
  utilityAvailable,
  VLLM_VERSION_INFO,
  type VllmVersion,
  versionHas,
  WIRE_CHANGES,
  type WireChange,
} from "@vllm-engine-core/protocol";

/** The versions the mock can play ("next", main after the pin, is the codec's, not an engine's). */
export const MOCK_VLLM_VERSIONS = ["0.22", "0.23", "0.24", "0.25", "main"] as const;
export type MockVllmVersion = (typeof MOCK_VLLM_VERSIONS)[number];

export function isMockVllmVersion(v: unknown): v is MockVllmVersion {
  return typeof v === "string" && (MOCK_VLLM_VERSIONS as readonly string[]).includes(v);
}

/** What the pinned main revision reports as vllm_version (a development build, like any main checkout). */
export const MOCK_MAIN_VLLM_VERSION = "0.26.0.dev0+mock";

/**
 * The `vllm_version` string the registration carries (vllm/version.py `__version__` via
 * EngineCoreProc.process_input_sockets, from v0.23 on: 1521173c, #43854), or undefined for v0.22,
 * whose EngineCoreReadyResponse has no such field. Releases report the revision the codec read.
 */
export function reportedVllmVersion(version: MockVllmVersion): string | undefined {
  if (version === "0.22") return undefined;
  if (version === "main") return MOCK_MAIN_VLLM_VERSION;
  return VLLM_VERSION_INFO[version].revision.replace(/^v/, ""); // "0.23.0", "0.24.0", "0.25.1"
}

function change(kind: WireChange["kind"], subject: string): WireChange {
  const found = WIRE_CHANGES.find((c) => c.kind === kind && c.subject === subject);
  // The registry is the mock's source for these switches: a renamed entry must not silently flip one.
  if (found === undefined) throw new Error(`WIRE_CHANGES has no ${kind} entry for ${subject}`);
  return found;
}

const has = (version: MockVllmVersion, c: WireChange) => versionHas(version as VllmVersion, c.since);

/** The decode-time checks of vllm/sampling_params.py (and the exception class) that differ by version. */
export interface DecodeRules {
  readonly version: MockVllmVersion;
  /**
   * SamplingParams.__post_init__ calls validate_thinking_token_budget (v0.23+, 739af5c7 #43402): -1
   * becomes None, other negatives fail. v0.22.1's __post_init__ never looks at the field, so any int
   * (-1, -5) is kept as sent; its ThinkingBudgetState (v1/sample/thinking_budget_state.py
   * _init_state_entry) then counts down from it, so -1 ends thinking at once instead of meaning unlimited.
   */
  readonly thinkingTokenBudgetChecked: boolean;
  /**
   * _verify_args rejects a non-finite repetition_penalty and a temperature that is not finite or above
   * 2.0 (v0.24+, ebb0a71a #44965). In v0.22.1 and v0.23.0 only `temperature < 0` fails (3.0 is accepted).
   */
  readonly temperatureBounded: boolean;
  /**
   * SamplingParams declares stream_interval (main, 8040ef24 #49754) and _verify_args rejects values
   * below 1. Older SamplingParams (a map-encoded msgspec Struct without forbid_unknown_fields) skip
   * the unknown key, so any value is ignored.
   */
  readonly streamInterval: boolean;
  /**
   * vllm.exceptions.VLLMValidationError derives from ValueError up to v0.25 (exceptions.py), so msgspec
   * wraps it, like every ValueError/TypeError a __post_init__ raises, into msgspec.ValidationError with
   * the struct's path appended (ms_maybe_wrap_validation_error). At main it derives from
   * VLLMClientError(VLLMError(Exception)) (58f96593 #49665) and propagates as itself.
   */
  readonly validationErrorIsValueError: boolean;
}

export function decodeRulesFor(version: MockVllmVersion): DecodeRules {
  return {
    version,
    thinkingTokenBudgetChecked: has(version, change("validation", "SamplingParams.thinking_token_budget")),
    temperatureBounded: has(version, change("validation", "SamplingParams.temperature")),
    streamInterval: has(version, change("validation", "SamplingParams.stream_interval")),
    validationErrorIsValueError: !has(version, change("validation", "SamplingParams")),
  };
}

/** The rules of the pinned revision (what the mock does unless told to play a release). */
export const PIN_DECODE_RULES: DecodeRules = decodeRulesFor("main");

/**
 * EngineCore.wake_up: from v0.24 (93ec6458 #44483, cherry-picked as 6ed56e04) it resumes the scheduler
 * only `if not self.model_executor.is_sleeping`; v0.22.1 and v0.23.0 call self.resume_scheduler()
 * after any wake_up, partial or not (vllm/v1/engine/core.py EngineCore.wake_up at each tag).
 */
export function partialWakeKeepsSchedulerPaused(version: MockVllmVersion): boolean {
  return has(version, change("behaviour", "wake_up"));
}

/**
 * Whether `getattr(engine_core_proc, name)` finds the method in this version (vllm/v1/engine/core.py:
 * get_weight_version / set_weight_version exist only at main, 9069a571 #49040). Names the registry does
 * not list (the mock-only helpers) exist in every version the mock plays.
 */
export function engineHasUtility(version: MockVllmVersion, name: string): boolean {
  return utilityAvailable(name, version as VllmVersion) !== false;
}

/**
 * Whether `struct` has the field `wire` in this version, for fields some supported version lacks
 * (WIRE_CHANGES field entries); a field no entry names exists in every version.
 */
export function versionHasField(version: MockVllmVersion, struct: string, wire: string): boolean {
  const added = WIRE_CHANGES.find(
    (c) => c.kind === "field" && c.subject === struct && c.fields?.includes(wire),
  );
  return added === undefined || has(version, added);
}
