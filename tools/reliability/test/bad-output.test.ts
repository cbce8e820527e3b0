// Priority 7: bad output traffic. Engine 1 of 2 pushes one undecodable frame (0xc1 + text) mid-stream.
// The runtime must keep running and every stream (of both engines) must complete in full.
//
// How it is reported (documented by this test): as a Node process warning emitted on the runtime worker
// thread, which Node prints to stderr ("vllm-engine-core runtime: dropped an undecodable output message:
// ..."). There is no typed error, no health change and no callback: the application's main thread cannot
// observe it (process.on("warning") there does not see it).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { FinishReason } from "@vllm-engine-core/client";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/garbage-frame.mjs", import.meta.url));

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
  mainThreadWarnings: string[];
}

describe("bad output traffic", () => {
  it("an undecodable output frame: warning on stderr, runtime keeps running, no stream is affected", async () => {
    const child = spawn(process.execPath, [fixture], { stdio: ["ignore", "pipe", "pipe"] });
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
    // Reported as a warning printed to stderr, once, with the protocol error's code; not as a typed error.
    const warnings = stderr.match(/vllm-engine-core runtime: dropped an undecodable output message/g) ?? [];
    expect(warnings).toHaveLength(1);
    expect(stderr).toContain("PROTOCOL_ERROR");
    expect(report.mainThreadWarnings).toEqual([]);
  });
});
