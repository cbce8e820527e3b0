import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { encodeAbortRequest } from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { freeTcpAddress, ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { RawEngine } from "./helpers/raw-engine.ts";
import { TransportWorker } from "./helpers/worker-harness.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

function worker(): TransportWorker {
  const w = new TransportWorker();
  defer(() => w.exit());
  return w;
}

async function mockEngine(options: Parameters<typeof startMockEngine>[0]): Promise<MockEngineProcess> {
  const engine = await startMockEngine(options);
  defer(() => engine.stop());
  return engine;
}

describe("bootstrapped mode", () => {
  it("binds the given addresses and waits for engines start…start+count-1 (engines started first)", async () => {
    const inputAddress = await freeTcpAddress();
    const outputAddress = ipc.address("out");
    // The engines dial before anything is bound; ZeroMQ reconnects and delivers the queued registrations.
    const engine = await mockEngine({
      mode: "bootstrapped",
      inputAddress,
      outputAddress,
      engineIndices: [3, 2],
    });
    const w = worker();
    const result = await w.connect({
      config: {
        mode: "bootstrapped",
        inputAddress,
        outputAddress,
        engineStartIndex: 2,
        engineCount: 2,
        readyTimeoutMs: 10_000,
      },
    });
    expect(result.inputAddress).toBe(inputAddress);
    expect(result.outputAddress).toBe(outputAddress);
    expect(result.engines.map((e) => e.index)).toEqual([2, 3]);
    expect(result.engines.map((e) => [...e.identity])).toEqual([
      [2, 0],
      [3, 0],
    ]);
    await w.request({ op: "send", engineIndex: 3, frames: encodeAbortRequest(["to-3"]) });
    const abort = await engine.waitForEvent((e) => e.event === "abort");
    expect(abort).toMatchObject({ engineIndex: 3, requestIds: ["to-3"] });
  });

  it("rejects a registration from an engine outside the expected range", async () => {
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress, engineStartIndex: 0, engineCount: 2 },
    });
    const stranger = new RawEngine(5);
    defer(() => stranger.close());
    await stranger.register(inputAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "0500",
      engineIndex: 5,
      address: inputAddress,
      expectedRange: { start: 0, count: 2 },
      expected: "engine indices 0…1 (engineCount 2)",
    });
  });

  it("names engineStartIndex in the expected range (the same check as the handshake's)", async () => {
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress, engineStartIndex: 4, engineCount: 2 },
    });
    const below = new RawEngine(3);
    defer(() => below.close());
    await below.register(inputAddress);
    const error = (await connecting.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "0300",
      engineIndex: 3,
      expectedRange: { start: 4, count: 2 },
      expected: "engine indices 4…5 (engineStartIndex 4, engineCount 2)",
    });
    expect(error.message).toContain(`0x0300 (engine index 3) connected to ${inputAddress}`);
  });

  it("sorts engines by identity bytes (00 01 < ff 00: engine 256 before 255)", async () => {
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress, engineStartIndex: 255, engineCount: 2 },
    });
    const engines = [255, 256].map((index) => new RawEngine(index));
    defer(() => {
      for (const e of engines) e.close();
    });
    for (const e of engines) await e.register(inputAddress);
    const result = await connecting;
    expect(result.engines.map((e) => e.index)).toEqual([256, 255]);
  });

  it("names the missing engine when a registration times out", async () => {
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: {
        mode: "bootstrapped",
        inputAddress,
        outputAddress,
        engineStartIndex: 7,
        engineCount: 2,
        readyTimeoutMs: 500,
      },
    });
    const engine = new RawEngine(7);
    defer(() => engine.close());
    await engine.register(inputAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "REGISTRATION",
      engineIndex: 8,
      address: inputAddress,
      timeoutMs: 500,
    });
  });

  it("accepts the highest identities that still fit u16", async () => {
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress, engineStartIndex: 65_534, engineCount: 2 },
    });
    const engines = [65_535, 65_534].map((index) => new RawEngine(index));
    defer(() => {
      for (const e of engines) e.close();
    });
    for (const e of engines) await e.register(inputAddress);
    const result = await connecting;
    // Byte order: fe ff < ff ff.
    expect(result.engines.map((e) => e.index)).toEqual([65_534, 65_535]);
  });
});
