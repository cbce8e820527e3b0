// openConnection({ signal }): aborting at any stage rejects with the signal's reason and leaves nothing
// bound on the runtime, so the same addresses can be bound again right away.
import type { MockEngineProcess } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { openConnection, type RuntimeConnectConfig, type RuntimeConnection } from "../src/index.ts";
import { collector, ipcAddress, request, sleep, startEngines, stopAll, withTimeout } from "./helpers.ts";

let engines: MockEngineProcess[] = [];
let connection: RuntimeConnection | undefined;

afterEach(async () => {
  await connection?.shutdown();
  connection = undefined;
  await stopAll(engines);
  engines = [];
});

function addresses() {
  return { handshakeAddress: ipcAddress("hs"), input: ipcAddress("in"), output: ipcAddress("out") };
}

function configFor(a: ReturnType<typeof addresses>): RuntimeConnectConfig {
  return {
    transport: {
      mode: "handshake-owner",
      handshakeAddress: a.handshakeAddress,
      localInputAddress: a.input,
      localOutputAddress: a.output,
      readyTimeoutMs: 20_000,
    },
  };
}

/** After an abort: the very same addresses bind again and serve a request. */
async function rebindAndServe(a: ReturnType<typeof addresses>): Promise<void> {
  await stopAll(engines);
  engines = await startEngines(a.handshakeAddress, [{ engineIndices: [0] }]);
  connection = await openConnection(configFor(a));
  expect(connection.info.inputAddress).toBe(a.input);
  expect(connection.info.outputAddress).toBe(a.output);
  const stream = collector();
  await connection.submit(request("after-abort", 3), stream.sink);
  expect((await withTimeout(stream.done, 10_000, "stream after re-bind")).tokens).toHaveLength(3);
}

async function expectAbortedWith(promise: Promise<unknown>, reason: unknown): Promise<void> {
  const outcome = await withTimeout(
    promise.then(
      () => ({ resolved: true as const }),
      (error: unknown) => ({ resolved: false as const, error }),
    ),
    10_000,
    "aborted connect to settle",
  );
  expect(outcome).toEqual({ resolved: false, error: reason });
}

describe("aborting openConnection", () => {
  it("rejects at once when the signal is already aborted", async () => {
    const reason = new Error("already aborted");
    await expectAbortedWith(
      openConnection(configFor(addresses()), { signal: AbortSignal.abort(reason) }),
      reason,
    );
  });

  it("while the runtime thread starts", async () => {
    const a = addresses();
    const controller = new AbortController();
    const reason = new Error("abort during runtime start");
    const pending = openConnection(configFor(a), { signal: controller.signal });
    queueMicrotask(() => controller.abort(reason));
    await expectAbortedWith(pending, reason);
    await rebindAndServe(a);
  });

  it("while waiting for the engines' HELLO (nothing connected yet)", async () => {
    const a = addresses();
    const controller = new AbortController();
    const reason = new Error("abort before HELLO");
    const pending = openConnection(configFor(a), { signal: controller.signal });
    await sleep(400);
    controller.abort(reason);
    await expectAbortedWith(pending, reason);
    await rebindAndServe(a);
  });

  it("after HELLO/INIT, while waiting for READY", async () => {
    const a = addresses();
    engines = await startEngines(a.handshakeAddress, [{ engineIndices: [0], faults: { noReady: true } }]);
    const controller = new AbortController();
    const reason = new Error("abort before READY");
    const pending = openConnection(configFor(a), { signal: controller.signal });
    await engines[0]!.waitForEvent((e) => e.event === "init", 10_000);
    controller.abort(reason);
    await expectAbortedWith(pending, reason);
    await rebindAndServe(a);
  });

  it("while waiting for the input-socket registration", async () => {
    const a = addresses();
    engines = await startEngines(a.handshakeAddress, [
      { engineIndices: [0], faults: { noRegistration: true } },
    ]);
    const controller = new AbortController();
    const reason = new Error("abort before registration");
    const pending = openConnection(configFor(a), { signal: controller.signal });
    await engines[0]!.waitForEvent((e) => e.event === "init", 10_000);
    await sleep(100);
    controller.abort(reason);
    await expectAbortedWith(pending, reason);
    await rebindAndServe(a);
  });

  it("has no effect once the connection is open", async () => {
    const a = addresses();
    engines = await startEngines(a.handshakeAddress, [{ engineIndices: [0] }]);
    const controller = new AbortController();
    connection = await openConnection(configFor(a), { signal: controller.signal });
    controller.abort(new Error("too late"));
    const stream = collector();
    await connection.submit(request("still-open", 2), stream.sink);
    expect((await withTimeout(stream.done, 10_000, "stream")).tokens).toHaveLength(2);
  });
});
