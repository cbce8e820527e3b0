// `--mock` picks its own handshake port: the OS names a free one, which is released before the runtime binds
// it, so another process can take it in between (CI saw exactly that: EADDRINUSE on a port picked a moment
// before). openSession must then pick again, stop the engine it started for the lost port, and connect.
import * as mockEngine from "@vllm-engine-core/mock-engine";
import { expect, test, vi } from "vitest";
import { openSession } from "../src/connection.js";
import { Lifecycle } from "../src/lifecycle.js";
import { holdPort } from "./helpers.js";

const picks = vi.hoisted(() => ({ queued: [] as number[], started: [] as mockEngine.MockEngineProcess[] }));

vi.mock("../src/mock-engine.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/mock-engine.js")>();
  return {
    ...real,
    // The port taken by someone else comes first; then the OS's picks.
    freePort: async () => picks.queued.shift() ?? (await real.freePort()),
    // The bundled copy lives in dist/; the workspace package is the same code, and lets the test see each start.
    loadMockEngine: async () => ({
      ...mockEngine,
      startMockEngine: async (options: mockEngine.MockEngineOptions) => {
        const engine = await mockEngine.startMockEngine(options);
        picks.started.push(engine);
        return engine;
      },
    }),
  };
});

test("--mock: a handshake port taken between pick and bind is picked again; the first engine is stopped", async () => {
  const taken = await holdPort();
  picks.queued.push(taken.port);
  const lifecycle = new Lifecycle();
  try {
    const session = await openSession(
      { kind: "mock", mock: { engines: 1, stepMs: 1, faults: [] }, readyTimeoutMs: 30_000 },
      lifecycle,
      () => {},
    );
    expect(picks.started).toHaveLength(2);
    expect(session.mock).toBe(picks.started[1]);
    await picks.started[0]!.exited; // stopped, not left running
    const stream = await session.client.call({
      requestId: "after-rebind",
      promptTokenIds: [1, 2, 3],
      samplingParams: { maxTokens: 2 },
    });
    const tokens: number[] = [];
    for await (const output of stream) tokens.push(...output.newTokenIds);
    expect(tokens).toHaveLength(2);
  } finally {
    await lifecycle.close();
    taken.server.close();
  }
  await picks.started[1]!.exited;
});
