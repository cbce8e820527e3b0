// The server scenario for real (built dist: mock engine child process, the fastify server in the scenario
// process, the load generator in a third process), briefly and with few streams: checks the shape and the
// consistency of its result and that the report renders it, never its timing.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { medianWriteFloorMs, renderServer, serverGoals } from "../src/report.js";
import type { ServerBenchResult } from "../src/types.js";

const scenarioMain = fileURLToPath(new URL("../dist/scenario-main.js", import.meta.url));

describe("server scenario", () => {
  it("streams chats over HTTP next to the bare client, joins SSE events to engine stamps, times a long prompt", async () => {
    expect(
      existsSync(scenarioMain),
      "build the bench first (pnpm --filter @vllm-engine-core/bench build)",
    ).toBe(true);
    const config = {
      streams: 4,
      stepMs: 10,
      warmupMs: 200,
      measureMs: 800,
      longPromptTokens: 2000,
      detokenizeTokens: 2000,
    };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [scenarioMain, "server", JSON.stringify(config)],
      { timeout: 90_000 },
    );
    const r = JSON.parse(stdout.trim().split("\n").pop()!) as ServerBenchResult;
    expect(r).toMatchObject({ streams: 4, stepMs: 10, engine: "mock", offeredTokensPerSec: 400 });
    expect(r.notes).toBeUndefined();

    // The bare client: every delivery timed, at least one token each.
    expect(r.bare.tokens).toBeGreaterThan(0);
    expect(r.bare.tokens).toBeGreaterThanOrEqual(r.bare.deliveries);
    expect(r.bare.delay.count).toBe(r.bare.deliveries);
    expect(r.bare.tokensPerSec).toBeGreaterThan(0);

    // The server: tokens counted from the SSE events' usage, every event joined to an engine stamp.
    expect(r.server.events).toBeGreaterThan(0);
    expect(r.server.tokens).toBeGreaterThanOrEqual(r.server.events);
    expect(r.server.unmatched).toBe(0);
    expect(r.server.delay.count).toBe(r.server.events);
    expect(r.server.delay.min).toBeGreaterThan(0); // the SSE byte arrives after the engine sent the output
    expect(r.server.delay.p50).toBeLessThanOrEqual(r.server.delay.p99);
    expect(r.added.p50).toBeCloseTo(r.server.delay.p50 - r.bare.delay.p50, 6);
    // The event loop's thread: a part of the process's CPU per token (the kernel's share is the writes').
    const loop = r.server.cpu.eventLoop!;
    expect(loop.userUsPerToken).toBeGreaterThan(0);
    expect(loop.kernelUsPerToken).toBeGreaterThanOrEqual(0);
    expect(loop.userUsPerToken + loop.kernelUsPerToken).toBeLessThanOrEqual(
      r.server.cpu.frontendUsPerToken! * 1.5,
    );

    expect(r.detokenize.tokens).toBe(2000);
    expect(r.detokenize.proseNsPerToken).toBeGreaterThan(0);
    expect(r.detokenize.mockIdsNsPerToken).toBeGreaterThan(0);

    // The long prompt: a baseline row, then /tokenize and a chat completion with it, the others measured.
    const rows = r.longPrompt!.rows;
    expect(rows.map((l) => l.what)).toEqual([
      "baseline (no long prompt, 1 s)",
      "POST /tokenize",
      "POST /v1/chat/completions (max_tokens 1)",
    ]);
    expect(rows[1]!.promptTokens).toBeGreaterThan(1500);
    expect(rows[1]!.promptTokens).toBeLessThanOrEqual(2001);
    expect(rows[2]!.promptTokens).toBeGreaterThan(rows[1]!.promptTokens!);
    for (const l of rows) {
      expect(l.othersGap.count, l.what).toBeGreaterThan(0);
      expect(l.othersDelay.count, l.what).toBeGreaterThan(0);
    }
    for (const l of rows.slice(1)) expect(l.ms, l.what).toBeGreaterThan(0);

    // The report: two goal rows and section 6 with the figures.
    const goals = serverGoals(r);
    expect(goals.map((g) => g.target)).toEqual(["≥ 0.5×", "≤ 1 ms"]);
    expect(goals.every((g) => g.ratio !== null)).toBe(true);
    // The added-latency row names its floor: half the streams' writes at the measured kernel time each.
    expect(medianWriteFloorMs(r)).toBeCloseTo((2 * loop.kernelUsPerToken) / 1000, 9);
    expect(goals[1]!.note).toContain("floor on one thread: 2 writes before the median token");
    const md = renderServer(r).join("\n");
    expect(md).toContain("## 6. Server");
    expect(md).toContain("POST /tokenize");
    expect(md).toContain("frontend CPU per token");
    expect(md).toContain("of it the event loop's thread, user + kernel");
    // Every row of the long-prompt table has as many cells as its header.
    const longTable = md
      .split("\n")
      .filter((l) => l.startsWith("| ") && md.indexOf(l) > md.indexOf("| while"));
    const cells = (l: string) => l.split(" | ").length;
    for (const l of longTable) expect(cells(l), l).toBe(cells(longTable[0]!));
  }, 120_000);
});
