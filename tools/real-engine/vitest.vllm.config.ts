import { mergeConfig } from "vitest/config";
import { packageTestConfig } from "../../vitest.shared.ts";

// The real-engine tier (`npm run test:vllm`): each file starts vLLM engines (8-15 s each idle, more on a
// loaded machine) on two shared cores, so files run one after another and every bound is generous.
export default mergeConfig(
  packageTestConfig({ include: ["test/vllm/**/*.test.ts"], testTimeout: 240_000, report: "vitest-vllm" }),
  {
    test: { fileParallelism: false, hookTimeout: 240_000, maxWorkers: 1 },
  },
);
