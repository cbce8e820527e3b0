// Shared vitest settings for every package: source-first resolution through the custom export
// condition, the `forks` pool (native addons crash the `threads` pool), and a JSON report that
// tools/scripts/test-summary.mjs adds up into the closing line.
import { mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

const conditions = ["@vllm-engine-core/source", ...defaultServerConditions];

/**
 * Under `npm test`, tools/scripts/tmp-guard.mjs points TMPDIR at a fresh directory (VEC_TEST_TMPDIR) and
 * fails the run when anything is left in it. Each package's tests, and every process they start, use a
 * subdirectory of their own so that the report can name the package.
 */
function usePackageTmpdir(): void {
  const guarded = process.env.VEC_TEST_TMPDIR;
  if (!guarded) return;
  const dir = join(guarded, `pkg-${basename(process.cwd())}`);
  mkdirSync(dir, { recursive: true });
  process.env.TMPDIR = dir;
}

export function packageTestConfig(
  overrides: { testTimeout?: number; include?: string[]; report?: "vitest" | "vitest-vllm" } = {},
) {
  usePackageTmpdir();
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ["@vllm-engine-core/source"] } },
    test: {
      pool: "forks",
      include: overrides.include ?? ["src/**/*.test.ts", "test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 30_000,
      hookTimeout: 60_000,
      reporters: ["default", "json"],
      // One report per Node line: `npm test` runs the suite on two (tools/scripts/test-runs.mjs). The
      // real-engine tier (`npm run test:vllm`) writes its own, so that it never replaces the default one.
      outputFile: {
        json: `.test-results/${overrides.report ?? "vitest"}-node${process.versions.node.split(".")[0]}.json`,
      },
    },
  });
}
