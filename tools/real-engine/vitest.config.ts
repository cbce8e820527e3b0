import { packageTestConfig } from "../../vitest.shared.ts";

// The default tier: needs nothing from ../shared (no vLLM, no Python).
export default packageTestConfig({ include: ["test/unit/**/*.test.ts"] });
