import { packageTestConfig } from "../../vitest.shared.ts";

// Every test runs the built CLI as a child process (and often a mock engine under it): generous bounds.
export default packageTestConfig({ testTimeout: 60_000 });
