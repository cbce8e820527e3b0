import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { encodeAbortRequest, RequestType } from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_PER_ENGINE_OUTPUT_SOCKETS, outputBinds } from "../src/connect.ts";
import { ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { RawEngine } from "./helpers/raw-engine.ts";
import { isOutputs, TransportWorker } from "./helpers/worker-harness.ts";

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

describe("handshake-owner mode", () => {
  it("brings up one mock engine over tcp://127.0.0.1:0 data-plane sockets and reports the real ports", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 10_000 },
    });
    await mockEngine({ mode: "handshake", handshakeAddress });
    const result = await connecting;
    expect(result.inputAddress).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(result.outputAddress).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(result.inputAddress.endsWith(":0")).toBe(false);
    expect(result.outputAddress).not.toBe(result.inputAddress);
    expect(result.engines).toHaveLength(1);
    expect(result.engines[0]!.index).toBe(0);
    expect([...result.engines[0]!.identity]).toEqual([0, 0]);
    expect(result.engines[0]!.readyResponse.dataParallelRank).toBe(0);
  });

  it("brings up four engines that say HELLO out of order; sorted by identity bytes", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, engineCount: 4, readyTimeoutMs: 10_000 },
    });
    // Indices stay inside [0, engineCount) as vLLM's ranks do; bootstrapped.test.ts covers 00 01 < ff 00.
    const engines = [2, 3, 1, 0].map((index) => new RawEngine(index));
    defer(() => {
      for (const e of engines) e.close();
    });
    await Promise.all(engines.map((e) => e.startup(handshakeAddress)));
    const result = await connecting;
    expect(result.engines.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    expect(result.engines.map((e) => e.readyResponse.instanceId)).toEqual([
      "raw-0",
      "raw-1",
      "raw-2",
      "raw-3",
    ]);
  });

  it("brings up four engines hosted by one mock-engine process and sends reach each of them", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, engineCount: 4, readyTimeoutMs: 10_000 },
    });
    const engine = await mockEngine({ mode: "handshake", handshakeAddress, engineIndices: [0, 1, 2, 3] });
    const result = await connecting;
    expect(result.engines.map((e) => e.index)).toEqual([0, 1, 2, 3]);
    await w.request({ op: "start-output" });
    for (const index of [0, 1, 2, 3]) {
      await w.request({ op: "send", engineIndex: index, frames: encodeAbortRequest([`req-${index}`]) });
    }
    for (const index of [0, 1, 2, 3]) {
      const event = await engine.waitForEvent((e) => e.event === "abort" && e.engineIndex === index);
      expect(event.requestIds).toEqual([`req-${index}`]);
    }
    expect(RequestType.ABORT).toBe(1);
  });

  it("binds explicit ipc:// input and output addresses and advertises them in INIT", async () => {
    const handshakeAddress = ipc.address("hs");
    const localInputAddress = ipc.address("in");
    const localOutputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, localInputAddress, localOutputAddress },
    });
    const engine = new RawEngine(0);
    defer(() => engine.close());
    const init = await engine.startup(handshakeAddress);
    expect(init.addresses.inputs).toEqual([localInputAddress]);
    expect(init.addresses.outputs).toEqual([localOutputAddress]);
    expect(init.addresses.coordinatorInput).toBeNull();
    expect(init.addresses.coordinatorOutput).toBeNull();
    expect(init.addresses.frontendStatsPublishAddress).toBeNull();
    expect(init.parallelConfig).toEqual({});
    const result = await connecting;
    expect(result.inputAddress).toBe(localInputAddress);
    expect(result.outputAddress).toBe(localOutputAddress);
    await w.request({ op: "start-output" });
    await engine.pushOutputs({ outputs: [], timestamp: 1.5 });
    const event = await w.waitForEvent(isOutputs);
    expect(event.outputs.timestamp).toBe(1.5);
  });

  it("accepts a READY that overtakes another engine's HELLO when there is no coordinator", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({ config: { mode: "handshake-owner", handshakeAddress, engineCount: 2 } });
    const first = new RawEngine(0);
    const second = new RawEngine(1);
    defer(() => first.close());
    defer(() => second.close());
    await first.startup(handshakeAddress); // HELLO, registration, READY — all before engine 1 says HELLO
    await second.startup(handshakeAddress);
    const result = await connecting;
    expect(result.engines.map((e) => e.index)).toEqual([0, 1]);
  });
});

describe("output sockets", () => {
  it("one per engine by default, shared with an explicit address or beyond MAX_PER_ENGINE_OUTPUT_SOCKETS", () => {
    expect(outputBinds(undefined, 3, "127.0.0.1")).toEqual(Array(3).fill("tcp://127.0.0.1:0"));
    expect(outputBinds("ipc:///tmp/out", 3, "127.0.0.1")).toEqual(["ipc:///tmp/out"]);
    expect(outputBinds(undefined, MAX_PER_ENGINE_OUTPUT_SOCKETS, "10.0.0.1")).toHaveLength(
      MAX_PER_ENGINE_OUTPUT_SOCKETS,
    );
    expect(outputBinds(undefined, MAX_PER_ENGINE_OUTPUT_SOCKETS + 1, "10.0.0.1")).toEqual([
      "tcp://10.0.0.1:0",
    ]);
  });
});
