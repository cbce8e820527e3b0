// The utility methods a frontend calls by name (UTILITY `[client_index, call_id, method, args]`), per
// vLLM version. The engine looks the name up with getattr on EngineCoreProc (EngineCoreProc
// `_handle_client_request`); a name its version lacks comes back as UtilityOutput.failure_message
// "Call to <name> method failed: '<class>' object has no attribute '<name>'". Signatures are the same in
// every version that has the method (read from vllm/v1/engine/core.py at each tag).
import { type VllmVersion, versionRank } from "./versions.js";

export interface UtilityMethod {
  readonly name: string;
  /** Python signature (positional arguments travel as the args array). */
  readonly signature: string;
  /**
   * Where vLLM defines it: every engine, only data-parallel engines (DPEngineCoreProc), or the input
   * thread itself (process_input_sockets intercepts the name before the busy loop sees it).
   */
  readonly owner: "EngineCore" | "DPEngineCoreProc" | "input thread";
  /** First version that has it (undefined: every supported version). */
  readonly since?: VllmVersion;
  /** Last version that has it (undefined: still there). */
  readonly until?: VllmVersion;
  /** A change of meaning between versions (the wire form is unchanged). */
  readonly note?: string;
}

export const UTILITY_METHODS: readonly UtilityMethod[] = [
  { name: "is_sleeping", signature: "is_sleeping() -> bool", owner: "EngineCore" },
  { name: "sleep", signature: "sleep(level: int = 1, mode: PauseMode = 'abort')", owner: "EngineCore" },
  {
    name: "wake_up",
    signature: "wake_up(tags: list[str] | None = None)",
    owner: "EngineCore",
    note: "from v0.24 a partial wake (tags) leaves the scheduler paused until the executor is fully awake (#44483)",
  },
  {
    name: "reset_prefix_cache",
    signature:
      "reset_prefix_cache(reset_running_requests: bool = False, reset_connector: bool = False) -> bool",
    owner: "EngineCore",
  },
  { name: "add_lora", signature: "add_lora(lora_request: LoRARequest) -> bool", owner: "EngineCore" },
  { name: "remove_lora", signature: "remove_lora(lora_id: int) -> bool", owner: "EngineCore" },
  { name: "pin_lora", signature: "pin_lora(lora_id: int) -> bool", owner: "EngineCore" },
  { name: "list_loras", signature: "list_loras() -> set[int]", owner: "EngineCore" },
  {
    name: "pause_scheduler",
    signature: "pause_scheduler(mode: PauseMode = 'abort', clear_cache: bool = True)",
    owner: "EngineCore",
  },
  { name: "resume_scheduler", signature: "resume_scheduler()", owner: "EngineCore" },
  { name: "is_scheduler_paused", signature: "is_scheduler_paused() -> bool", owner: "EngineCore" },
  {
    name: "collective_rpc",
    signature:
      "collective_rpc(method: str, timeout: float | None = None, args: tuple = (), kwargs: dict | None = None) -> list",
    owner: "EngineCore",
  },
  {
    name: "profile",
    signature: "profile(is_start: bool = True, profile_prefix: str | None = None)",
    owner: "EngineCore",
  },
  { name: "reset_mm_cache", signature: "reset_mm_cache()", owner: "EngineCore" },
  { name: "reset_encoder_cache", signature: "reset_encoder_cache()", owner: "EngineCore" },
  {
    name: "save_sharded_state",
    signature: "save_sharded_state(path: str, pattern: str | None = None, max_size: int | None = None)",
    owner: "EngineCore",
  },
  { name: "get_supported_tasks", signature: "get_supported_tasks() -> tuple[str, ...]", owner: "EngineCore" },
  { name: "execute_dummy_batch", signature: "execute_dummy_batch()", owner: "EngineCore" },
  {
    name: "get_kv_cache_group_metadata",
    signature: "get_kv_cache_group_metadata() -> list[dict]",
    owner: "EngineCore",
  },
  {
    name: "get_weight_version",
    signature: "get_weight_version() -> str",
    owner: "EngineCore",
    since: "main",
  },
  {
    name: "set_weight_version",
    signature: "set_weight_version(weight_version: str)",
    owner: "EngineCore",
    since: "main",
  },
  {
    name: "reinitialize_distributed",
    signature: "reinitialize_distributed(reconfig_request: ReconfigureDistributedRequest)",
    owner: "DPEngineCoreProc",
    note: "returns None up to v0.25, a str at main (#47288)",
  },
  {
    name: "eep_handle_engine_core_notification",
    signature: "eep_handle_engine_core_notification(notification_type: str)",
    owner: "DPEngineCoreProc",
    until: "0.25",
  },
  {
    name: "commit_prepared_elastic_ep",
    signature: "commit_prepared_elastic_ep()",
    owner: "DPEngineCoreProc",
    since: "main",
  },
  {
    name: "handle_fault_tolerance",
    signature: "handle_fault_tolerance(ft_request)",
    owner: "input thread",
    since: "main",
    note: "only with enable_fault_tolerance: otherwise self.ft_sentinel does not exist and the AttributeError, raised outside any try, ends the engine's input thread (#44428)",
  },
];

const BY_NAME = new Map(UTILITY_METHODS.map((m) => [m.name, m]));

export function utilityMethod(name: string): UtilityMethod | undefined {
  return BY_NAME.get(name);
}

/**
 * Whether an engine of `version` has the utility `name`: true/false for the methods listed in
 * UTILITY_METHODS, undefined for any other name (vLLM resolves names with getattr, so an unlisted
 * public method may still exist).
 */
export function utilityAvailable(name: string, version: VllmVersion): boolean | undefined {
  const m = BY_NAME.get(name);
  if (m === undefined) return undefined;
  const rank = versionRank(version);
  if (m.since !== undefined && rank < versionRank(m.since)) return false;
  if (m.until !== undefined && rank > versionRank(m.until)) return false;
  return true;
}
