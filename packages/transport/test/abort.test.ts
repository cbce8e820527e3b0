// Cancellation: connectTransport aborted at any stage closes every socket it opened (the addresses are free
// the moment it rejects), leaves no timer or handle behind on the worker thread, and rejects with the reason.
import { afterAll, describe, expect, it } from "vitest";
import { freeTcpAddress, ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { assertBindable, RawEngine } from "./helpers/raw-engine.ts";
import { TransportWorker } from "./helpers/worker-harness.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

function worker(): TransportWorker {
  const w = new TransportWorker();
  defer(() => w.exit());
  return w;
}

function rawEngine(index: number): RawEngine {
  const engine = new RawEngine(index);
  defer(() => engine.close());
  return engine;
}

/** Explicit tcp addresses (ports can be "in use", unlike ipc paths, so re-binding proves the release). */
async function tcpOwnerConfig(engineCount = 1) {
  return {
    mode: "handshake-owner" as const,
    handshakeAddress: await freeTcpAddress(),
    localInputAddress: await freeTcpAddress(),
    localOutputAddress: await freeTcpAddress(),
    engineCount,
    readyTimeoutMs: 30_000,
  };
}

function addressesOf(config: Awaited<ReturnType<typeof tcpOwnerConfig>>): string[] {
  return [config.handshakeAddress, config.localInputAddress, config.localOutputAddress];
}

const abortReason = (message: string) => ({ name: "TestAbortReason", message });

async function expectNoResourcesLeft(w: TransportWorker): Promise<void> {
  // Settled libuv requests may linger for a tick; anything else (Timeout, sockets) is a leak.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await w.request<string[]>({ op: "resources" })).toEqual([]);
}

describe("aborting connectTransport", () => {
  it("rejects at once with the reason when the signal is already aborted", async () => {
    const w = worker();
    const config = await tcpOwnerConfig();
    await expect(w.connect({ config, preAborted: true })).rejects.toMatchObject(
      abortReason("aborted before connect"),
    );
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("during the first bind", async () => {
    const w = worker();
    const config = await tcpOwnerConfig();
    await expect(w.connect({ config, abortSynchronously: true })).rejects.toMatchObject(
      abortReason("aborted during bind"),
    );
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("while waiting for HELLO", async () => {
    const w = worker();
    const config = await tcpOwnerConfig();
    const connecting = w.connect({ config });
    // A peer that connected but says nothing proves the handshake socket is bound and being read.
    const engine = rawEngine(0);
    const handshake = engine.connectHandshake(config.handshakeAddress);
    await new Promise<void>((resolve) => handshake.events.on("handshake", () => resolve()));
    await w.request({ op: "abort", reason: "stop at HELLO" });
    await expect(connecting).rejects.toMatchObject(abortReason("stop at HELLO"));
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("while waiting for READY", async () => {
    const w = worker();
    const config = await tcpOwnerConfig(2);
    const connecting = w.connect({ config });
    await rawEngine(0).hello(config.handshakeAddress);
    await w.request({ op: "abort", reason: "stop at READY" });
    await expect(connecting).rejects.toMatchObject(abortReason("stop at READY"));
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("while waiting for the registration", async () => {
    const w = worker();
    const config = await tcpOwnerConfig();
    const connecting = w.connect({ config });
    const engine = rawEngine(0);
    await engine.hello(config.handshakeAddress);
    await engine.sendStatus("READY");
    // The handshake socket is closed once READY was taken: wait until the engine sees that disconnect.
    await new Promise<void>((resolve) => engine.handshake!.events.on("disconnect", () => resolve()));
    await w.request({ op: "abort", reason: "stop at REGISTRATION" });
    await expect(connecting).rejects.toMatchObject(abortReason("stop at REGISTRATION"));
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("in bootstrapped mode while waiting for registrations", async () => {
    const w = worker();
    const config = {
      mode: "bootstrapped" as const,
      inputAddress: await freeTcpAddress(),
      outputAddress: await freeTcpAddress(),
      engineCount: 2,
    };
    const connecting = w.connect({ config });
    const engine = rawEngine(0);
    await engine.register(config.inputAddress);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await w.request({ op: "abort", reason: "stop bootstrapped" });
    await expect(connecting).rejects.toMatchObject(abortReason("stop bootstrapped"));
    await assertBindable([config.inputAddress, config.outputAddress]);
    await expectNoResourcesLeft(w);
  });

  it("the same worker can connect again on the same addresses right after an abort", async () => {
    const w = worker();
    const config = await tcpOwnerConfig();
    const first = w.connect({ config });
    const stale = rawEngine(0);
    await stale.hello(config.handshakeAddress);
    await w.request({ op: "abort", reason: "retry" });
    await expect(first).rejects.toMatchObject(abortReason("retry"));
    // Otherwise its DEALER reconnects to the new handshake ROUTER first and, holding identity 00 00, makes the
    // ROUTER refuse the new engine's connection (libzmq rejects a duplicate routing id).
    stale.close();
    const second = w.connect({ config });
    await rawEngine(0).startup(config.handshakeAddress);
    const result = await second;
    expect(result.inputAddress).toBe(config.localInputAddress);
    await w.request({ op: "close" });
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });

  it("a failed connect (timeout) leaves nothing behind either", async () => {
    const w = worker();
    const config = { ...(await tcpOwnerConfig()), readyTimeoutMs: 200 };
    await expect(w.connect({ config })).rejects.toMatchObject({ name: "HandshakeTimeoutError" });
    await assertBindable(addressesOf(config));
    await expectNoResourcesLeft(w);
  });
});
