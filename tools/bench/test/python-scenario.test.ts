// The Python baseline scenario for real (built dist, its own process as the bench runs it) with an
// interpreter that lacks the modules: a clean "skipped" row, never a crash or a failed step. At 1,024
// streams its config (≈ 300 KB) is larger than a pipe buffer, so a loop that exits before reading it
// used to make the write fail with an unhandled EPIPE that killed the scenario.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { ThroughputResult } from "../src/types.js";

const scenarioMain = fileURLToPath(new URL("../dist/scenario-main.js", import.meta.url));
const PYTHON = "/usr/bin/python3";

function runScenario(config: object) {
  return promisify(execFile)(process.execPath, [scenarioMain, "throughput-python", JSON.stringify(config)], {
    timeout: 60_000,
  });
}

describe("python scenario", () => {
  it("is skipped, with the missing module named, when the interpreter lacks zmq / msgpack (1024 streams)", async () => {
    expect(existsSync(scenarioMain), "build the bench first").toBe(true);
    expect(existsSync(PYTHON), `${PYTHON} is the baseline's interpreter`).toBe(true);
    // -S: no site-packages, so neither python3-zmq nor python3-msgpack imports, whatever the machine has.
    for (let run = 0; run < 3; run++) {
      const { stdout } = await runScenario({
        streams: 1024,
        warmupMs: 100,
        measureMs: 200,
        python: [PYTHON, "-S"],
      });
      const r = JSON.parse(stdout.trim().split("\n").pop()!) as ThroughputResult;
      expect(r).toMatchObject({ runner: "python", streams: 1024, tokens: 0, windowMs: 0 });
      expect(r.skipped).toMatch(/^missing module: (msgpack|zmq) \(install python3-zmq python3-msgpack\)$/);
    }
  }, 120_000);

  it("reports a loop that exits before reading its config as a failure with its exit code, not an EPIPE crash", async () => {
    // An interpreter whose module check passes but whose loop exits at once without reading stdin:
    // `python3 -c CODE script [--check]` runs CODE with the script's arguments in sys.argv.
    const code = "import sys; print('{\"ok\": true}') if sys.argv[-1] == '--check' else sys.exit(4)";
    const failure = await runScenario({
      streams: 1024,
      warmupMs: 100,
      measureMs: 200,
      python: [PYTHON, "-c", code],
    }).then(
      () => undefined,
      (error: Error & { stderr: string }) => error,
    );
    expect(failure, "the scenario must fail").toBeDefined();
    expect(failure!.stderr).toContain("the Python frontend loop failed (exit 4)");
    expect(failure!.stderr).not.toContain("Unhandled 'error' event");
  }, 120_000);
});
