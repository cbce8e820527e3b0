// Shared vitest settings for every package: source-first resolution through the custom export
// condition, the `forks` pool (native addons crash the `threads` pool), and a JSON report that
// tools/scripts/test-summary.mjs adds up into the closing line.
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

const conditions = ["@vllm-engine-core/source", ...defaultServerConditions];

export function packageTestConfig(overrides: { testTimeout?: number; include?: string[] } = {}) {
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ["@vllm-engine-core/source"] } },
    test: {
      pool: "forks",
      include: overrides.include ?? ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 30_000,
      hookTimeout: 60_000,
      reporters: ["default", "json"],
      outputFile: { json: ".test-results/vitest.json" },
    },
  });
}
