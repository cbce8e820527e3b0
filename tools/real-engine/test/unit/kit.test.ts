// Kit lookup without any vLLM: each way of not having one gives a one-line reason.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { realEngineKit } from "../../src/index.ts";

const scratch = mkdtempSync(join(tmpdir(), "real-engine-kit-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("realEngineKit", () => {
  it("names a VLLM_ENGINE_CORE_PYTHON that cannot import vllm", async () => {
    const lookup = await realEngineKit({
      env: { ...process.env, VLLM_ENGINE_CORE_PYTHON: join(scratch, "no-python") },
    });
    expect(lookup.ready).toBe(false);
    if (!lookup.ready) {
      expect(lookup.reason).toMatch(/VLLM_ENGINE_CORE_PYTHON=.*no-python cannot import vllm/);
      expect(lookup.reason).not.toContain("\n");
    }
  });

  it("says where it looked when VLLM_CPU_KIT has no kit", async () => {
    const lookup = await realEngineKit({
      env: { ...process.env, VLLM_ENGINE_CORE_PYTHON: "", VLLM_CPU_KIT: join(scratch, "nowhere") },
    });
    expect(lookup).toEqual({ ready: false, reason: expect.stringContaining("VLLM_CPU_KIT") });
  });

  it("reports a kit that is not set up when setting up is not allowed", async () => {
    const kitDir = join(scratch, "kit");
    mkdirSync(kitDir);
    writeFileSync(join(kitDir, "vllm"), 'HOME_DIR="$HOME/.cache/vllm-cpu-0000000"\n');
    const lookup = await realEngineKit({
      env: {
        ...process.env,
        VLLM_ENGINE_CORE_PYTHON: "",
        VLLM_CPU_KIT: kitDir,
        VLLM_CPU_HOME: join(scratch, "home"),
      },
      setUp: false,
    });
    expect(lookup).toEqual({
      ready: false,
      reason: `the vLLM kit at ${kitDir} is not set up (run ${kitDir}/setup.sh)`,
    });
  });
});
