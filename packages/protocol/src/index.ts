export const PINNED_VLLM_COMMIT = "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1";
