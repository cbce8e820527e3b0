// Every wire-visible difference between the supported vLLM versions, with the upstream commit that made
// it. Field entries must match the `since` of the struct tables (test/versions-registry.test.ts checks
// both directions); the other kinds describe behaviour the codec cannot see in a field table.
import type { VllmVersion } from "./versions.js";

export type WireChangeKind = "field" | "validation" | "utility" | "behaviour";

export interface WireChange {
  readonly kind: WireChangeKind;
  /** Struct (or utility method) it concerns, as vLLM names it. */
  readonly subject: string;
  /** Field entries: the wire names of the fields added. */
  readonly fields?: readonly string[];
  /** First version with the change. */
  readonly since: VllmVersion;
  /** Upstream main commit (the release tag got it by branching from main, or by the cherry-pick noted). */
  readonly commit: string;
  readonly pr: number;
  readonly date: string;
  /** What changes on the wire, and what the codec does about it. */
  readonly summary: string;
  /** Row heading in the compatibility table (non-field changes). */
  readonly label?: string;
}

export const WIRE_CHANGES: readonly WireChange[] = [
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: ["vllm_version"],
    since: "0.23",
    commit: "1521173c170f395b697bade2339c7946a68aa654",
    pr: 43854,
    date: "2026-05-29",
    summary:
      "Registration gains vllm_version (required) and dtype becomes a required str (was `str | None = None`; v0.22 always sends a str).",
  },
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: ["block_size"],
    since: "0.23",
    commit: "654bd2bca412c0ab72eb4ada1d0fc271c7aed44e",
    pr: 42967,
    date: "2026-06-02",
    summary: "Registration gains block_size (required). Absent from v0.22 frames.",
  },
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: ["kv_cache_size_tokens", "kv_cache_max_concurrency"],
    since: "0.24",
    commit: "b7f9b6ab271faa621f4cc438fd5ea7ecaf72db8e",
    pr: 42206,
    date: "2026-06-12",
    summary:
      "Registration gains the KV cache capacity (default None; None also for attention-free models). Absent (not null) from older frames.",
  },
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: ["world_size", "data_parallel_size"],
    since: "0.24",
    commit: "4cb5e746b63707ed470f952cfb77778a3dd34400",
    pr: 44801,
    date: "2026-06-18",
    summary: "Registration gains world_size and data_parallel_size (required).",
  },
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: [
      "tensor_parallel_size",
      "pipeline_parallel_size",
      "decode_context_parallel_size",
      "data_parallel_rank",
      "max_num_seqs",
      "max_num_batched_tokens",
      "instance_id",
    ],
    since: "main",
    commit: "e3c2fc3b3ca3f41466126cd2aa0b228eb8465844",
    pr: 49491,
    date: "2026-07-27",
    summary:
      "Registration gains 7 required fields. A decoder that requires them rejects every released engine.",
  },
  {
    kind: "field",
    subject: "EngineCoreReadyResponse",
    fields: ["kv_events_config"],
    since: "main",
    commit: "48fc2e2797ec3f35605c3ff399bbaab7938b0459",
    pr: 50033,
    date: "2026-07-29",
    summary: "Registration gains kv_events_config (KVEventsConfig dataclass map or None).",
  },
  {
    kind: "field",
    subject: "EngineCoreOutput",
    fields: ["ec_transfer_params"],
    since: "main",
    commit: "8df14cfc8c8a09b4e57f082e59593a3abce4ffb3",
    pr: 42433,
    date: "2026-07-12",
    summary:
      "INSERTED at index 9: outputs grow from 13 to 14 elements and trace_headers, prefill_stats, routed_experts, num_nans_in_logits move one slot right. The codec reads the layout from each output's array length.",
  },
  {
    kind: "field",
    subject: "SpecDecodingStats",
    fields: ["num_draft_tokens_per_pos"],
    since: "0.24",
    commit: "4ef4492e9b7a5a7ba295da783d456d45db5eb9d6",
    pr: 32374,
    date: "2026-06-14",
    summary: "Spec-decoding stats gain a per-position draft count (5 → 6 keys).",
  },
  {
    kind: "field",
    subject: "SchedulerStats",
    fields: ["iteration_details"],
    since: "main",
    commit: "5a65ba5f179887ec331bb96b1fc3cd1fb045e988",
    pr: 46647,
    date: "2026-07-15",
    summary:
      "Scheduler stats gain iteration_details (SchedulerIterationDetails map or None): 15 keys (fixmap) → 16 (map16).",
  },
  {
    kind: "field",
    subject: "PrefillStats",
    fields: ["num_cache_creation_tokens"],
    since: "main",
    commit: "a287eb163fb6f8f007a4a78411fb54c8dde64cc7",
    pr: 48535,
    date: "2026-07-18",
    summary: "Prefill stats gain num_cache_creation_tokens (5 → 6 keys).",
  },
  {
    kind: "field",
    subject: "SamplingParams",
    fields: ["stream_interval"],
    since: "main",
    commit: "8040ef242662af2f07614d78862c53338f046878",
    pr: 49754,
    date: "2026-07-27",
    summary:
      "SamplingParams gains stream_interval (a frontend knob read by output_processor.py). Older engines ignore the key (unknown map keys are skipped).",
  },
  {
    kind: "field",
    subject: "EngineCoreRequest",
    fields: ["session_id"],
    since: "next",
    commit: "f57123aa2dbc1badb1865b18c724b308f90dceda",
    pr: 48048,
    date: "2026-08-03",
    summary:
      "Appended at index 20 (after the pin). The codec sends it only when set: engines up to the pin skip the extra trailing element.",
  },
  {
    kind: "validation",
    subject: "SamplingParams.thinking_token_budget",
    label: "thinking_token_budget −1 → None, other negatives rejected (decode-time)",
    since: "0.23",
    commit: "739af5c7e1603b6c9a4d376b52dc7f4b19e1403d",
    pr: 43402,
    date: "2026-05-26",
    summary:
      "__post_init__ turns -1 into None and rejects other negatives, floats and bools. v0.22 accepts any int (-1 reaches the sampler).",
  },
  {
    kind: "validation",
    subject: "SamplingParams.temperature / SamplingParams.repetition_penalty",
    label: "temperature and repetition_penalty must be finite (decode-time)",
    since: "0.24",
    commit: "d598d239737cfa37bcfcb98886ec3f3557fc7198",
    pr: 45116,
    date: "2026-06-11",
    summary:
      "_verify_args rejects a NaN or infinite temperature or repetition_penalty. Before v0.24 both pass decode (NaN compares false with every bound). Also in v0.23.1rc0, which was cut from main.",
  },
  {
    kind: "validation",
    subject: "SamplingParams.temperature",
    label: "temperature must be ≤ 2 (decode-time)",
    since: "0.24",
    commit: "ebb0a71ad0b2e2a09ed76b14338465f6b121ebfd",
    pr: 44965,
    date: "2026-06-14",
    summary: "_verify_args rejects a temperature above 2. Before v0.24 a temperature of 3 is accepted.",
  },
  {
    kind: "validation",
    subject: "SamplingParams.stream_interval",
    label: "stream_interval must be ≥ 1 (decode-time)",
    since: "main",
    commit: "8040ef242662af2f07614d78862c53338f046878",
    pr: 49754,
    date: "2026-07-27",
    summary: "_verify_args rejects stream_interval < 1 (the field exists only from here).",
  },
  {
    kind: "validation",
    subject: "SamplingParams",
    since: "main",
    commit: "58f96593971b6287cdc8867024a6dfb9985c545c",
    label: "validation errors are VLLMValidationError, not ValueError",
    pr: 49665,
    date: "2026-07-29",
    summary:
      "Validation errors become VLLMValidationError, no longer a ValueError: msgspec re-raises it as is instead of wrapping it in ValidationError. Either way the ADD decode fails outside the input thread's try and the thread dies.",
  },
  {
    kind: "utility",
    subject: "get_weight_version / set_weight_version",
    label: "weight version utilities",
    since: "main",
    commit: "9069a57139bc075733ffb82c228d9f33945e524b",
    pr: 49040,
    date: "2026-07-28",
    summary:
      "New utilities. Older engines reply failure_message \"Call to X method failed: 'EngineCoreProc' object has no attribute 'X'\".",
  },
  {
    kind: "utility",
    subject: "commit_prepared_elastic_ep / eep_handle_engine_core_notification / reinitialize_distributed",
    label: "Elastic EP utilities (commit_prepared_elastic_ep; no eep_handle_engine_core_notification)",
    since: "main",
    commit: "35efdf6b34f1ef76c23c8980f6e8a3b73cab50f1",
    pr: 47288,
    date: "2026-07-28",
    summary:
      "Elastic EP (DP engines): commit_prepared_elastic_ep added, eep_handle_engine_core_notification removed, reinitialize_distributed returns a str; EEPNotificationType loses NEW_CORE_ENGINES_INIT_READY and NEW_CORE_ENGINES_WEIGHTS_INIT_READY.",
  },
  {
    kind: "utility",
    subject: "handle_fault_tolerance",
    label: "fault tolerance utility and reserved call_id −2",
    since: "main",
    commit: "0b0bd2b5f6a7f15ef59621efe6e535b54c6348f9",
    pr: 44428,
    date: "2026-07-25",
    summary:
      "Fault-tolerance utility, intercepted by the input thread (engine_core_sentinel); status replies use the reserved call_id -2 (FT_STATUS_CALL_ID) next to -1 (EEP).",
  },
  {
    kind: "behaviour",
    subject: "wake_up",
    label: "partial wake_up(tags) keeps the scheduler paused",
    since: "0.24",
    commit: "93ec6458781b50a89f967126419312388c5505a3",
    pr: 44483,
    date: "2026-06-24",
    summary:
      "wake_up(tags) resumes the scheduler only once the executor is fully awake: a partial wake leaves it paused (v0.24.0 has the cherry-pick 6ed56e04f). Before v0.24 any wake_up resumes it.",
  },
  {
    kind: "behaviour",
    subject: "SamplingParams.extra_args",
    label: "engine reads extra_args kv_cache_report_mode / ec_transfer_params",
    since: "main",
    commit: "e5588e49bc2642670116664a7fc4096e27adb179",
    pr: 45261,
    date: "2026-07-09",
    summary:
      "The engine reads extra_args kv_cache_report_mode (#45261) and ec_transfer_params (8df14cfc, #42433) besides kv_transfer_params; older engines ignore them.",
  },
  {
    kind: "behaviour",
    subject: "DP coordinator publish",
    label: "DP coordinator counts carry kv_cache_usage",
    since: "main",
    commit: "59a6b0411d1817c712728a17fa8c2e0cdb4cf1f9",
    pr: 49204,
    date: "2026-07-27",
    summary:
      "The coordinator's per-engine counts become [waiting, running, kv_cache_usage] (were [waiting, running]); non-MoE DP engines publish counts too. Coordinator → frontend only.",
  },
];
