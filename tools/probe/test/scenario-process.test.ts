// runScenarioProcess / runScenarioFromArgv for real: a child node process running the built module.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runScenarioProcess } from "../src/scenario-process.js";

const entry = fileURLToPath(new URL("./fixtures/scenarios.mjs", import.meta.url));
const built = fileURLToPath(new URL("../dist/scenario-process.js", import.meta.url));

describe("scenario processes", () => {
  it("resolves with the child's last stdout line, parsed, for the scenario and config asked", async () => {
    expect(existsSync(built), "build the probe first (pnpm --filter @vllm-engine-core/probe build)").toBe(
      true,
    );
    const result = await runScenarioProcess(entry, "echo", { streams: 3 }, { label: "scenario echo" });
    expect(result).toEqual({ got: { streams: 3 } });
  });

  it("rejects with the label when the scenario throws or is not registered", async () => {
    await expect(runScenarioProcess(entry, "fail", {}, { label: "scenario fail" })).rejects.toThrow(
      /^scenario fail failed \(exit code 1/,
    );
    await expect(runScenarioProcess(entry, "nope", {}, { label: "scenario nope" })).rejects.toThrow(
      /^scenario nope failed \(exit code 1/,
    );
  });

  it("kills a scenario still running after timeoutMs", async () => {
    await expect(
      runScenarioProcess(entry, "hang", {}, { label: "scenario hang", timeoutMs: 1000 }),
    ).rejects.toThrow("scenario hang did not finish within 1 s and was killed");
  });
});
