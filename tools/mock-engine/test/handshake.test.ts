import { isEngineCoreDead } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { type MockEngineProcess, startMockEngine } from "../src/index.js";
import { RawFrontend, request } from "./harness.js";

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  engine = undefined;
  frontend = undefined;
});

describe("handshake mode", () => {
  it("runs HELLO → INIT → registration → READY for one engine", async () => {
    frontend = await RawFrontend.create();
    engine = await startMockEngine({ handshakeAddress: frontend.handshakeAddress });
    const responses = await frontend.connect([0]);

    const hello = frontend.handshakeMessages.items[0]!;
    expect(hello.frames).toHaveLength(2);
    expect([...hello.frames[0]!]).toEqual([0, 0]);
    expect(hello.status).toEqual({ status: "HELLO", local: false, headless: true });
    const ready = frontend.handshakeMessages.items.find((m) => m.status?.status === "READY")!;
    expect(ready.status).toEqual({ status: "READY", local: false, headless: true });
    expect(frontend.handshakeMessages.items).toHaveLength(2);

    const registration = frontend.registrations.items[0]!;
    expect(registration.frames).toHaveLength(2);
    expect(responses.get(0)).toMatchObject({ dataParallelRank: 0, dataParallelSize: 1, maxModelLen: 4096 });

    await engine.waitForEvent((e) => e.event === "ready" && e.engineIndex === 0);
    expect(engine.events.map((e) => e.event).slice(0, 5)).toEqual([
      "started",
      "hello",
      "init",
      "registered",
      "ready",
    ]);
  });

  it("hosts two engines in one process, each with its own identity, sockets and scheduler", async () => {
    frontend = await RawFrontend.create();
    engine = await startMockEngine({
      handshakeAddress: frontend.handshakeAddress,
      engineIndices: [0, 1],
      stepMs: 2,
    });
    const responses = await frontend.connect([0, 1]);
    expect(responses.get(0)!.dataParallelRank).toBe(0);
    expect(responses.get(1)!.dataParallelRank).toBe(1);
    expect(frontend.registrations.items.map((r) => [...r.frames[0]!]).sort()).toEqual([
      [0, 0],
      [1, 0],
    ]);

    await frontend.add(0, request("on-0", { maxTokens: 4 }));
    await frontend.add(1, request("on-1", { maxTokens: 6 }));
    const a = await frontend.finished("on-0");
    const b = await frontend.finished("on-1");
    expect(a.tokens).toHaveLength(4);
    expect(b.tokens).toHaveLength(6);
    expect(a.messages.every((m) => m.engineIndex === 0)).toBe(true);
    expect(b.messages.every((m) => m.engineIndex === 1)).toBe(true);
    expect(frontend.received.items.some((m) => m.kind === "dead" || isEngineCoreDead(m.frames))).toBe(false);
  });
});
