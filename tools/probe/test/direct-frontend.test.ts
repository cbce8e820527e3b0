// The control frontend against the real mock engine (child process): handshake, outputs, abort.
import { expectedTokens, type MockEngineProcess } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { DirectFrontend } from "../src/direct/direct-frontend.js";
import { startProbeEngine } from "../src/engine.js";
import { freeTcpPort } from "../src/net.js";
import { wireRequest } from "../src/requests.js";

let engine: MockEngineProcess | undefined;
let frontend: DirectFrontend | undefined;
afterEach(async () => {
  await frontend?.close();
  await engine?.stop();
  frontend = undefined;
  engine = undefined;
});

describe("DirectFrontend", () => {
  it("does the engine handshake on this thread and streams outputs with sub-millisecond CLOCK_MONOTONIC send stamps", async () => {
    const port = await freeTcpPort();
    engine = await startProbeEngine({ handshakeAddress: `tcp://127.0.0.1:${port}`, stepMs: 2 });
    frontend = await DirectFrontend.connect({
      handshakeAddress: `tcp://127.0.0.1:${port}`,
      timeoutMs: 20_000,
    });
    expect(frontend.engines.map((e) => e.index)).toEqual([0]);
    expect(frontend.signalerFds()).toHaveLength(2);
    expect(frontend.tcpPorts().every((p) => Number.isInteger(p) && p > 0)).toBe(true);

    const tokens: number[] = [];
    const stamps: number[] = [];
    let finish: number | null = null;
    const done = new Promise<void>((resolve) => {
      frontend!.startOutputLoop((outputs) => {
        stamps.push(outputs.timestamp);
        for (const o of outputs.outputs) {
          tokens.push(...o.newTokenIds);
          if (o.finishReason != null) {
            finish = o.finishReason;
            resolve();
          }
        }
      });
    });
    const request = wireRequest("direct-1", 12);
    await frontend.submit(request);
    await done;
    expect(tokens).toEqual(expectedTokens("direct-1", request.promptTokenIds!, 12));
    expect(finish).toBe(1); // LENGTH
    // Stamped at send on CLOCK_MONOTONIC, the clock this process reads too (not epoch seconds) ...
    const now = Number(process.hrtime.bigint()) / 1e9;
    expect(stamps.every((s) => s <= now && now - s < 10)).toBe(true);
    // ... with sub-millisecond resolution.
    expect(stamps.some((s) => Math.abs(s * 1000 - Math.round(s * 1000)) > 1e-6)).toBe(true);
  });
});
