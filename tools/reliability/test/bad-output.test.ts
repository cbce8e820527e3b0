// Priority 7: bad output traffic. Engine 1 of 2 pushes one undecodable frame (0xc1 + text) mid-stream.
// Nothing in it can be attributed to a request, so engine 1 is treated as dead with the ProtocolError as the
// health error (as vLLM's clients treat any undecodable output as fatal): its streams fail at once with that
// error, engine 0's streams complete in full, new work fails fast with the health error.
//
// How it is reported (documented by this test): the ProtocolError names the engine and the outcome, it is
// counted in `client.diagnostics()` (as `lastProtocolError`, with what it failed) and logged as a Node process
// warning [VLLM_UNDECODABLE_OUTPUT] emitted on the runtime worker thread (rate-limited), which Node prints to
// stderr. process.on("warning") on the application's main thread does not see the runtime thread's warnings.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { FinishReason } from "@vllm-engine-core/client";
import { afterEach, describe, expect, it } from "vitest";
import { ipcAddress, removeIpcFiles } from "../src/harness.ts";

const fixture = fileURLToPath(new URL("./fixtures/garbage-frame.mjs", import.meta.url));
afterEach(() => removeIpcFiles());

interface GarbageReport {
  results: {
    requestId: string;
    engineIndex: number;
    tokensOk: boolean;
    tokens: number;
    finishReason: number | null;
    error: { name: string; code: string; engineIndex: number; outcome: string; message: string } | null;
  }[];
  garbageSent: boolean;
  healthChanges: string[];
  healthy: boolean;
  health: { name: string; engineIndex: number; outcome: string } | null;
  after: { error: string | null; sameAsHealth?: boolean; ms: number };
  diagnostics: {
    undecodable: number;
    requestsFailed: number;
    enginesDead: number;
    lastError: { name: string; code: string; message: string } | null;
  };
  mainThreadWarnings: string[];
}

describe("bad output traffic", () => {
  it("an undecodable output frame from engine 1 of 2: engine 1 dead with the ProtocolError, its streams fail, engine 0's complete", async () => {
    const child = spawn(process.execPath, [fixture, ipcAddress("garbage")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    const report = JSON.parse(stdout.trim().split("\n").pop()!) as GarbageReport;
    console.log(`[reliability] bad output frame: stderr of the process:\n${stderr.trim()}`);
    console.log(`[reliability] bad output frame: ${JSON.stringify(report)}`);
    expect(report.garbageSent).toBe(true);
    for (const r of report.results) {
      if (r.engineIndex === 0) {
        expect(r, r.requestId).toMatchObject({
          tokensOk: true,
          finishReason: FinishReason.LENGTH,
          error: null,
        });
      } else {
        expect(r.error, r.requestId).toMatchObject({
          name: "ProtocolError",
          code: "PROTOCOL_ERROR",
          engineIndex: 1,
          outcome: "engine-dead",
        });
        expect(r.tokensOk, r.requestId).toBe(false); // failed mid-stream, not completed
      }
    }
    // Engine 1's death is the connection's health error; new work fails fast with it.
    expect(report.healthy).toBe(false);
    expect(report.health).toEqual({ name: "ProtocolError", engineIndex: 1, outcome: "engine-dead" });
    expect(report.healthChanges).toHaveLength(1);
    expect(report.healthChanges[0]).toMatch(/^ProtocolError: Cannot decode EngineCoreOutputs from engine 1/);
    expect(report.after).toMatchObject({ sameAsHealth: true });
    expect(report.after.ms).toBeLessThan(1000);
    // Counted, with the typed error and what it failed, and logged once on stderr.
    expect(report.diagnostics).toMatchObject({ undecodable: 1, requestsFailed: 4, enginesDead: 1 });
    expect(report.diagnostics.lastError).toMatchObject({ name: "ProtocolError", code: "PROTOCOL_ERROR" });
    const warnings = stderr.match(/vllm-engine-core: dropped an undecodable engine output message/g) ?? [];
    expect(warnings).toHaveLength(1);
    expect(stderr).toContain("VLLM_UNDECODABLE_OUTPUT");
    expect(stderr).toContain("Engine 1 is treated as dead");
    expect(report.mainThreadWarnings).toEqual([]);
  });
});
