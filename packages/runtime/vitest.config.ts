import { packageTestConfig } from "../../vitest.shared.ts";

// Real worker threads, real engines as child processes: generous per-test timeout.
export default packageTestConfig({ testTimeout: 60_000 });
