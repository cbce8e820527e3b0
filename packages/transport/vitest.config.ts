import { mergeConfig } from "vitest/config";
import { packageTestConfig } from "../../vitest.shared.ts";

// The transport only runs inside a worker thread; Node 20 cannot start .ts workers, so the test worker entry
// is bundled to JS before the run (test/setup/build-test-worker.ts).
export default mergeConfig(packageTestConfig(), {
  test: { globalSetup: ["./test/setup/build-test-worker.ts"] },
});
