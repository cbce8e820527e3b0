/** The vLLM commit whose wire format this package implements (upstream main, 2026-08-01). */
export const VLLM_REVISION = "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1" as const;
