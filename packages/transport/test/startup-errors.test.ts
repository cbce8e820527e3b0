import { existsSync } from "node:fs";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { encodeHandshakeStatus } from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import * as zmq from "zeromq";
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

function rawEngine(index: number, identity?: Uint8Array): RawEngine {
  const engine = new RawEngine(index, identity);
  defer(() => engine.close());
  return engine;
}

async function mockEngine(options: Parameters<typeof startMockEngine>[0]): Promise<MockEngineProcess> {
  const engine = await startMockEngine(options);
  defer(() => engine.stop());
  return engine;
}

/** A handshake-owner config with explicit addresses (so the test can check they were released). */
function ownerConfig(extra: { engineCount?: number; readyTimeoutMs?: number } = {}) {
  return {
    mode: "handshake-owner" as const,
    handshakeAddress: ipc.address("hs"),
    localInputAddress: ipc.address("in"),
    localOutputAddress: ipc.address("out"),
    readyTimeoutMs: 400,
    ...extra,
  };
}

describe("startup timeouts", () => {
  it("HELLO: names the stage, the handshake address and the timeout; every socket is released", async () => {
    const config = ownerConfig();
    const error = await worker()
      .connect({ config })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "HandshakeTimeoutError",
      code: "HANDSHAKE_TIMEOUT",
      stage: "HELLO",
      engineIndex: null,
      address: config.handshakeAddress,
      timeoutMs: 400,
    });
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("READY: names the one engine still missing", async () => {
    const config = ownerConfig({ engineCount: 2, readyTimeoutMs: 600 });
    const connecting = worker().connect({ config });
    await rawEngine(0).startup(config.handshakeAddress);
    await rawEngine(1).hello(config.handshakeAddress); // never READY
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "READY",
      engineIndex: 1,
      address: config.handshakeAddress,
      timeoutMs: 600,
    });
  });

  it("an engine that disconnects after HELLO, before READY: EngineDeadError at once, not a READY timeout", async () => {
    const config = ownerConfig({ engineCount: 2, readyTimeoutMs: 20_000 });
    const started = Date.now();
    const connecting = worker().connect({ config });
    await rawEngine(0).startup(config.handshakeAddress);
    const doomed = rawEngine(1);
    await doomed.hello(config.handshakeAddress);
    doomed.close(); // dies during startup
    const error = await connecting.catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "EngineDeadError", code: "ENGINE_DEAD", engineIndex: 1 });
    expect((error as Error).message).toContain(
      `disconnected from the handshake socket ${config.handshakeAddress}`,
    );
    expect(Date.now() - started).toBeLessThan(10_000); // far below readyTimeoutMs
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("READY: a mock engine with the noReady fault", async () => {
    const config = ownerConfig({ readyTimeoutMs: 1500 });
    const connecting = worker().connect({ config });
    await mockEngine({
      mode: "handshake",
      handshakeAddress: config.handshakeAddress,
      faults: { noReady: true },
    });
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "READY",
      engineIndex: 0,
    });
  });

  it("REGISTRATION: names the engine and the input address", async () => {
    const config = ownerConfig({ engineCount: 4, readyTimeoutMs: 600 });
    const connecting = worker().connect({ config });
    for (const index of [0, 1, 2]) await rawEngine(index).startup(config.handshakeAddress);
    const engine = rawEngine(3);
    await engine.hello(config.handshakeAddress);
    await engine.sendStatus("READY"); // but never registers on the input socket
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "REGISTRATION",
      engineIndex: 3,
      address: config.localInputAddress,
    });
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("REGISTRATION: a mock engine with the noRegistration fault", async () => {
    const config = ownerConfig({ readyTimeoutMs: 1500 });
    const connecting = worker().connect({ config });
    await mockEngine({
      mode: "handshake",
      handshakeAddress: config.handshakeAddress,
      faults: { noRegistration: true },
    });
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "REGISTRATION",
      engineIndex: 0,
    });
  });

  it("the timeout bounds each receive, not the whole startup", async () => {
    const config = ownerConfig({ engineCount: 3, readyTimeoutMs: 700 });
    const connecting = worker().connect({ config });
    const started = Date.now();
    for (const index of [0, 1, 2]) {
      await new Promise((resolve) => setTimeout(resolve, 400)); // each gap < timeout, total > timeout
      await rawEngine(index).startup(config.handshakeAddress);
    }
    const result = await connecting;
    expect(Date.now() - started).toBeGreaterThan(700);
    expect(result.engines).toHaveLength(3);
  });
});

describe("unexpected handshake messages", () => {
  it("rejects a HELLO with an extra frame", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    engine.connectHandshake(config.handshakeAddress);
    await engine.handshake!.send([
      encodeHandshakeStatus({ status: "HELLO", local: false, headless: true }),
      "x",
    ]);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      engineIndex: 0,
      address: config.handshakeAddress,
      detail: expect.stringContaining("expected 2 frames"),
    });
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("rejects a payload that is not a status map", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    engine.connectHandshake(config.handshakeAddress);
    await engine.handshake!.send(Buffer.from([0xc1])); // 0xc1 is never valid msgpack
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      detail: expect.stringContaining("not a HELLO/READY status map"),
    });
  });

  it("rejects an unknown status (mock engine badHello fault)", async () => {
    const config = ownerConfig({ readyTimeoutMs: 5000 });
    const connecting = worker().connect({ config });
    await mockEngine({
      mode: "handshake",
      handshakeAddress: config.handshakeAddress,
      faults: { badHello: true },
    });
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      engineIndex: 0,
      detail: expect.stringContaining("unexpected handshake status"),
    });
  });

  it("rejects an identity that is not a 2-byte engine index", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    await rawEngine(0, Uint8Array.of(0xaa, 0xbb, 0xcc)).sendStatus("HELLO", config.handshakeAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      code: "UNEXPECTED_ENGINE_IDENTITY",
      identityHex: "aabbcc",
      engineIndex: null,
      address: config.handshakeAddress,
      expected: expect.stringContaining("2-byte little-endian engine index"),
    });
  });

  it("rejects a duplicate HELLO during the HELLO phase", async () => {
    const config = ownerConfig({ engineCount: 2 });
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    await engine.hello(config.handshakeAddress);
    await engine.sendStatus("HELLO");
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      engineIndex: 0,
      detail: expect.stringContaining("duplicate HELLO"),
    });
  });

  it("rejects a HELLO after INIT once all engines said HELLO", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    await engine.hello(config.handshakeAddress);
    await engine.sendStatus("HELLO");
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      detail: expect.stringContaining("duplicate HELLO after INIT"),
    });
  });

  it("rejects READY before HELLO, saying exactly that", async () => {
    const config = ownerConfig({ engineCount: 2 });
    const connecting = worker().connect({ config });
    await rawEngine(0).hello(config.handshakeAddress);
    await rawEngine(1).sendStatus("READY", config.handshakeAddress);
    const error = (await connecting.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      code: "UNEXPECTED_HANDSHAKE_MESSAGE",
      engineIndex: 1,
      address: config.handshakeAddress,
      detail: expect.stringMatching(/^READY before HELLO/),
    });
    expect(error.message).not.toMatch(/data-parallel|rank/);
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("rejects a registration from an engine that did not take part in the handshake", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    const init = await engine.hello(config.handshakeAddress);
    await engine.sendStatus("READY");
    await rawEngine(9).register(init.addresses.inputs[0]!);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "0900",
      engineIndex: 9,
      address: config.localInputAddress,
      expectedRange: { start: 0, count: 1 },
      expected: "engine index 0 (engineCount 1)",
    });
    await assertBindable([config.handshakeAddress, config.localInputAddress, config.localOutputAddress]);
  });

  it("rejects an empty registration frame (pre-2026-04 engines)", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    const init = await engine.hello(config.handshakeAddress);
    await engine.sendStatus("READY");
    await engine.register(init.addresses.inputs[0]!, new Uint8Array(0));
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      engineIndex: 0,
      detail: expect.stringContaining("empty registration"),
    });
  });

  it("rejects a registration payload that is not an EngineCoreReadyResponse", async () => {
    const config = ownerConfig();
    const connecting = worker().connect({ config });
    const engine = rawEngine(0);
    const init = await engine.hello(config.handshakeAddress);
    await engine.sendStatus("READY");
    await engine.register(
      init.addresses.inputs[0]!,
      encodeHandshakeStatus({ status: "HELLO", local: true, headless: false }),
    );
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      detail: expect.stringContaining("not an EngineCoreReadyResponse"),
    });
  });
});

// vLLM's frontend looks a HELLO's identity up among the engines it expects and refuses a stranger before it
// sends INIT (vllm/v1/engine/utils.py wait_for_engine_startup: "unexpected data parallel rank").
describe("a HELLO from an engine outside [0, engineCount)", () => {
  /** No INIT reaches `engine` within a while (the frontend never answered its HELLO). */
  async function expectNoInit(engine: RawEngine): Promise<void> {
    const received = await Promise.race([
      engine.handshake!.receive().then(() => "INIT"),
      new Promise((resolve) => setTimeout(() => resolve("nothing"), 500)),
    ]);
    expect(received).toBe("nothing");
  }

  /** Every socket of the failed connect was closed: its ipc files are removed (only after a close), and the
   *  addresses bind again. */
  async function expectReleased(config: ReturnType<typeof ownerConfig>): Promise<void> {
    const addresses = [config.handshakeAddress, config.localInputAddress, config.localOutputAddress];
    for (const address of addresses) expect(existsSync(address.slice("ipc://".length))).toBe(false);
    await assertBindable(addresses);
  }

  it("fails connect() naming the identity, the address and the range; no INIT; every socket released", async () => {
    const config = ownerConfig({ engineCount: 2, readyTimeoutMs: 20_000 });
    const started = Date.now();
    const connecting = worker().connect({ config });
    const stranger = rawEngine(2);
    await stranger.sendStatus("HELLO", config.handshakeAddress);
    const error = (await connecting.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({
      name: "UnexpectedEngineIdentityError",
      code: "UNEXPECTED_ENGINE_IDENTITY",
      identityHex: "0200",
      engineIndex: 2,
      address: config.handshakeAddress,
      expectedRange: { start: 0, count: 2 },
      expected: "engine indices 0…1 (engineCount 2)",
    });
    expect(error.message).toContain(
      `A peer with identity 0x0200 (engine index 2) connected to ${config.handshakeAddress}, expected engine indices 0…1 (engineCount 2).`,
    );
    expect(Date.now() - started).toBeLessThan(10_000); // at once, not at readyTimeoutMs
    await expectNoInit(stranger);
    await expectReleased(config);
  });

  it("after an expected engine got its INIT: the stranger gets none, the connect fails", async () => {
    const config = ownerConfig({ engineCount: 2, readyTimeoutMs: 20_000 });
    const connecting = worker().connect({ config });
    const expected = rawEngine(0);
    await expected.hello(config.handshakeAddress);
    const stranger = rawEngine(300);
    await stranger.sendStatus("HELLO", config.handshakeAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "2c01",
      engineIndex: 300,
      expectedRange: { start: 0, count: 2 },
    });
    await expectNoInit(stranger);
    await expectReleased(config);
  });

  it("once every expected engine said HELLO (READY phase), a stranger's HELLO still fails the connect", async () => {
    const config = ownerConfig({ readyTimeoutMs: 20_000 });
    const connecting = worker().connect({ config });
    await rawEngine(0).hello(config.handshakeAddress);
    const stranger = rawEngine(1);
    await stranger.sendStatus("HELLO", config.handshakeAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "0100",
      engineIndex: 1,
      expectedRange: { start: 0, count: 1 },
      expected: "engine index 0 (engineCount 1)",
    });
    await expectNoInit(stranger);
    await expectReleased(config);
  });

  it("a READY from outside the range is the same identity error", async () => {
    const config = ownerConfig({ engineCount: 2 });
    const connecting = worker().connect({ config });
    await rawEngine(0).hello(config.handshakeAddress);
    await rawEngine(7).sendStatus("READY", config.handshakeAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedEngineIdentityError",
      identityHex: "0700",
      engineIndex: 7,
      expectedRange: { start: 0, count: 2 },
    });
  });
});

describe("bind failures", () => {
  it("names the socket and the address, and releases the sockets bound before", async () => {
    // tcp: libzmq silently takes over an ipc path that is in use, so only a port can be "in use".
    const config = { ...ownerConfig(), localOutputAddress: await freeTcpAddress() };
    const squatter = new zmq.Router({ linger: 0 });
    await squatter.bind(config.localOutputAddress);
    defer(() => squatter.close());
    const error = await worker()
      .connect({ config })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "BindError",
      code: "BIND_FAILED",
      socket: "output",
      address: config.localOutputAddress,
      causeMessage: expect.stringMatching(/in use/i),
    });
    await assertBindable([config.localInputAddress, config.handshakeAddress]);
  });

  it("reports a handshake address that cannot be bound", async () => {
    const config = { ...ownerConfig(), handshakeAddress: "tcp://203.0.113.7:5555" }; // TEST-NET-3: not local
    await expect(worker().connect({ config })).rejects.toMatchObject({
      name: "BindError",
      socket: "handshake",
      address: "tcp://203.0.113.7:5555",
    });
    await assertBindable([config.localInputAddress, config.localOutputAddress]);
  });

  // The transport no longer validates: the one schema (@vllm-engine-core/config resolveConfig) does, on the
  // thread that connects, before the transport is called (the test worker resolves like the runtime's host).
  // InvalidConfigError is not registered in the protocol package, so across the thread boundary it keeps its
  // name and message only.
  it("rejects an invalid configuration before opening any socket", async () => {
    const w = worker();
    await expect(
      w.connect({
        config: {
          mode: "bootstrapped",
          inputAddress: "tcp://127.0.0.1:0",
          outputAddress: "tcp://127.0.0.1:0",
          engineStartIndex: 65_535,
          engineCount: 2,
        },
      }),
    ).rejects.toMatchObject({
      name: "InvalidConfigError",
      message: expect.stringContaining("`transport.engineCount`: engine indices 65535..65536 do not fit"),
    });
    await expect(w.connect({ config: ownerConfig(), clientIndex: 1 })).rejects.toMatchObject({
      name: "InvalidConfigError",
      message: expect.stringContaining("`clientIndex`: must be 0 with the handshake-owner transport (got 1)"),
    });
    await expect(w.connect({ config: { ...ownerConfig(), engineCount: 0 } })).rejects.toMatchObject({
      name: "InvalidConfigError",
      message: expect.stringContaining("`transport.engineCount`: expected an integer in [1, 65536], got 0"),
    });
    await expect(
      w.connect({ config: { ...ownerConfig(), handshakeAddress: "http://x" } }),
    ).rejects.toMatchObject({
      name: "InvalidConfigError",
      message: expect.stringContaining("`transport.handshakeAddress`: expected a ZeroMQ endpoint"),
    });
  });
});
