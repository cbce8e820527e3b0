// Priority 7: bad output traffic. Engine 1 of 2 pushes one undecodable frame (0xc1 + text) mid-stream.
// The runtime must keep running and every stream (of both engines) must complete in full.
//
// How it is reported (documented by this test): counted in `client.diagnostics()` with the typed
// ProtocolError as `lastProtocolError`, and logged as a Node process warning [VLLM_UNDECODABLE_OUTPUT]
// emitted on the runtime worker thread (rate-limited), which Node prints to stderr. No stream fails and the
// health does not change: the message names no request. process.on("warning") on the application's main
// thread does not see the runtime thread's warnings.
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
    error: string | null;
  }[];
  garbageSent: boolean;
  healthChanges: string[];
  healthy: boolean;
  after: number;
  diagnostics: { undecodable: number; lastError: { name: string; code: string; message: string } | null };
  mainThreadWarnings: string[];
}

describe("bad output traffic", () => {
  it("an undecodable output frame: counted with its ProtocolError, warned once, no stream is affected", async () => {
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
      expect(r, r.requestId).toMatchObject({
        tokensOk: true,
        finishReason: FinishReason.LENGTH,
        error: null,
      });
    }
    expect(report.healthChanges).toEqual([]);
    expect(report.healthy).toBe(true);
    expect(report.after).toBe(3);
    // Counted, with the typed error, and logged once on stderr.
    expect(report.diagnostics.undecodable).toBe(1);
    expect(report.diagnostics.lastError).toMatchObject({ name: "ProtocolError", code: "PROTOCOL_ERROR" });
    const warnings = stderr.match(/vllm-engine-core: dropped an undecodable engine output message/g) ?? [];
    expect(warnings).toHaveLength(1);
    expect(stderr).toContain("VLLM_UNDECODABLE_OUTPUT");
    expect(report.mainThreadWarnings).toEqual([]);
  });
});
