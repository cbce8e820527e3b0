// The executor's own Python unit tests (tools/vllm-executor/tests), run with the kit's Python so that the
// worker tests can build vLLM's SchedulerOutput types.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { executorDir } from "../../src/index.ts";
import { kit, title } from "./tier.ts";

describe.skipIf(!kit)(title("model-free executor Python tests"), () => {
  it("pass under `python -m unittest`", () => {
    if (!kit) return;
    const r = spawnSync(kit.python, ["-m", "unittest", "discover", "-s", "tests", "-t", "."], {
      cwd: executorDir,
      env: { ...process.env, ...kit.env },
      encoding: "utf8",
      timeout: 180_000,
    });
    const summary = `${r.stdout}\n${r.stderr}`.split("\n").slice(-15).join("\n");
    expect(r.status, summary).toBe(0);
    expect(r.stderr).toMatch(/Ran \d+ tests/);
    expect(r.stderr).toMatch(/\nOK/);
  });
});
