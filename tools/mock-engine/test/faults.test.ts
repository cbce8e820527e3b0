import { FinishReason } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { type MockEngineOptions, type MockEngineProcess, startMockEngine } from "../src/index.js";
import { delay, RawFrontend, request } from "./harness.js";

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  engine = undefined;
  frontend = undefined;
});

async function start(options: Partial<MockEngineOptions>) {
  frontend = await RawFrontend.create();
  engine = await startMockEngine({ stepMs: 2, ...options, handshakeAddress: frontend.handshakeAddress });
  return { frontend, engine };
}

describe("fault switches", () => {
  it("crashAfterSteps: the process dies abruptly (SIGKILL), no sentinel, no exit event", async () => {
    const { frontend, engine } = await start({ faults: { crashAfterSteps: 5 } });
    await frontend.connect([0]);
    await frontend.add(0, request("victim", { maxTokens: 1000 }));
    const exit = await engine.exited;
    expect(exit.signal).toBe("SIGKILL");
    expect(engine.events.some((e) => e.event === "fault" && e.kind === "crash" && e.step === 5)).toBe(true);
    expect(engine.events.some((e) => e.event === "exit")).toBe(false);
    await delay(100);
    expect(frontend.received.items.some((m) => m.kind === "dead")).toBe(false);
    expect(frontend.outputsFor("victim").length).toBeLessThanOrEqual(5);
  });

  it("deadSentinelAfterSteps: ENGINE_CORE_DEAD on the output socket after the step outputs, then exit 1", async () => {
    const { frontend, engine } = await start({ faults: { deadSentinelAfterSteps: 3 } });
    await frontend.connect([0]);
    await frontend.add(0, request("doomed", { maxTokens: 1000 }));
    const dead = await frontend.received.wait((m) => m.kind === "dead", 10_000, "ENGINE_CORE_DEAD");
    expect(dead.frames).toHaveLength(1);
    expect(Buffer.from(dead.frames[0]!).toString("latin1")).toBe("ENGINE_CORE_DEAD");
    expect(frontend.outputsFor("doomed")).toHaveLength(3);
    expect(frontend.received.items.at(-1)).toBe(dead);
    const exit = await engine.exited;
    expect(exit.code).toBe(1);
    expect(engine.events.at(-1)).toMatchObject({ event: "exit", code: 1 });
  });

  it("a pooling request is fatal like in vLLM (unsupported task): ENGINE_CORE_DEAD", async () => {
    const { frontend, engine } = await start({});
    await frontend.connect([0]);
    await frontend.add(0, request("embed", {}, { samplingParams: null, poolingParams: { task: "embed" } }));
    await frontend.received.wait((m) => m.kind === "dead", 10_000, "ENGINE_CORE_DEAD");
    expect((await engine.exited).code).toBe(1);
    const fault = engine.events.find((e) => e.event === "fault" && e.kind === "engine-dead")!;
    expect(String(fault.detail)).toContain("Unsupported task");
  });

  it("stallAfterSteps: outputs pause for stallMs once, then resume", async () => {
    const { frontend, engine } = await start({ stepMs: 2, faults: { stallAfterSteps: 3, stallMs: 400 } });
    await frontend.connect([0]);
    await frontend.add(0, request("slow", { maxTokens: 8 }));
    const { tokens } = await frontend.finished("slow");
    expect(tokens).toHaveLength(8);
    const times = frontend.received.items.filter((m) => m.kind === "outputs").map((m) => m.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps[2]).toBeGreaterThanOrEqual(350); // between step 3 and step 4
    expect(gaps.filter((g) => g >= 350)).toHaveLength(1);
    expect(engine.events.some((e) => e.event === "fault" && e.kind === "stall")).toBe(true);
  });

  it("badHello: HELLO carries a wrong status", async () => {
    const { frontend } = await start({ faults: { badHello: true } });
    const hello = await frontend.handshakeMessages.wait(() => true, 10_000, "HELLO");
    expect(hello.status?.status).not.toBe("HELLO");
    expect(hello.status).toMatchObject({ local: false, headless: true });
  });

  it("noReady: registers on the input socket but never sends READY", async () => {
    const { frontend, engine } = await start({ faults: { noReady: true } });
    await frontend.answerHellos([0]);
    await frontend.awaitRegistrations(0);
    await engine.waitForEvent((e) => e.event === "fault" && e.kind === "no-ready");
    await delay(300);
    expect(frontend.handshakeMessages.items.map((m) => m.status?.status)).toEqual(["HELLO"]);
  });

  it("noRegistration: sends READY but never the input-socket registration", async () => {
    const { frontend, engine } = await start({ faults: { noRegistration: true } });
    await frontend.answerHellos([0]);
    await frontend.handshakeMessages.wait((m) => m.status?.status === "READY", 10_000, "READY");
    await engine.waitForEvent((e) => e.event === "fault" && e.kind === "no-registration");
    await delay(300);
    expect(frontend.registrations.items).toHaveLength(0);
  });

  it("garbageFrameAfterSteps: one undecodable frame on the output socket, then normal outputs", async () => {
    const { frontend } = await start({ faults: { garbageFrameAfterSteps: 2 } });
    await frontend.connect([0]);
    await frontend.add(0, request("g", { maxTokens: 5 }));
    const { tokens, last } = await frontend.finished("g");
    expect(tokens).toHaveLength(5);
    expect(last.finishReason).toBe(FinishReason.LENGTH);
    const kinds = frontend.received.items.map((m) => m.kind);
    expect(kinds).toEqual(["outputs", "outputs", "bad", "outputs", "outputs", "outputs"]);
    const bad = frontend.received.items[2]!;
    expect(bad.frames).toHaveLength(1);
  });
});
