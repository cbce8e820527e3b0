// The runtime thread crashes (an uncaught error, injected through the test hook): every handle on every
// thread fails with RuntimeCrashedError, no socket is left behind, and the next connect starts a fresh
// runtime.
process.env.VLLM_ENGINE_CORE_TEST_HOOKS = "1";

import { connect, createServer } from "node:net";
import { RuntimeCrashedError } from "@vllm-engine-core/errors";
import { type MockEngineProcess, reservedTcpPorts } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { runtimeHost } from "../src/caller/host.ts";
import { type ConnectionHandle, openConnection } from "../src/index.ts";
import { collector, ipcAddress, request, startEngines, stopAll, TestThread, withTimeout } from "./helpers.ts";

let engines: MockEngineProcess[] = [];

async function freeTcpAddress(): Promise<string> {
  const [port] = await reservedTcpPorts(1);
  return `tcp://127.0.0.1:${port}`;
}

const portOf = (address: string) => Number(address.slice(address.lastIndexOf(":") + 1));

/** Resolves once the runtime's socket listens on the tcp address (a plain TCP connect, closed at once). */
async function untilListening(address: string): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(portOf(address), "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves once a plain server can listen on the address (nothing holds it any more). */
async function untilBindable(address: string): Promise<void> {
  for (;;) {
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(portOf(address), "127.0.0.1", () => resolve(true));
    });
    if (bound) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const threads: TestThread[] = [];

afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.terminate()));
  await stopAll(engines);
  engines = [];
});

describe("runtime crash", () => {
  it("fails every handle on every thread with RuntimeCrashedError; the next connect works", async () => {
    const handshakeAddress = ipcAddress("crash");
    engines = await startEngines(handshakeAddress, [{ engineIndices: [0], stepMs: 5 }]);
    const config = {
      transport: { mode: "handshake-owner" as const, handshakeAddress, readyTimeoutMs: 20_000 },
    };
    const main = await openConnection(config);
    const worker = new TestThread();
    threads.push(worker);
    await worker.call("attach", { handle: main.handle });
    await worker.call("submit", { request: request("w-live", 100_000) });
    const live = collector();
    await main.submit(request("m-live", 100_000), live.sink);
    const health: Error[] = [];
    main.onHealthChange((error) => health.push(error));

    const crashed = runtimeHost().crashForTesting("injected crash");
    expect(crashed).toBe(main.handle.connectionId.split(":")[0]);

    const result = await withTimeout(live.done, 10_000, "main stream failure");
    expect(result.error).toBeInstanceOf(RuntimeCrashedError);
    expect(result.error?.message).toContain("injected crash");
    expect(main.healthError).toBeInstanceOf(RuntimeCrashedError);
    expect(health).toHaveLength(1);
    const workerStream = await worker.call<{ error: { name: string } | null }>("wait", {
      requestId: "w-live",
    });
    expect(workerStream.error?.name).toBe("RuntimeCrashedError");
    expect(await worker.call<{ name: string } | null>("health")).toMatchObject({
      name: "RuntimeCrashedError",
    });
    await expect(main.submit(request("late", 1), collector().sink)).rejects.toBeInstanceOf(
      RuntimeCrashedError,
    );
    await expect(main.callUtility("engine_index", [])).rejects.toBeInstanceOf(RuntimeCrashedError);

    // The crashed runtime closed its sockets: the same handshake address binds again on a fresh runtime.
    await stopAll(engines);
    engines = await startEngines(handshakeAddress, [{ engineIndices: [0] }]);
    const again = await openConnection(config);
    expect(again.handle.connectionId.split(":")[0]).not.toBe(crashed);
    const fresh = collector();
    await again.submit(request("fresh", 3), fresh.sink);
    expect((await withTimeout(fresh.done, 10_000, "fresh stream")).tokens).toHaveLength(3);
    await main.shutdown(); // harmless on a crashed connection
    await again.shutdown();
  });

  it("a crash while a connect waits for HELLO closes that connect's sockets too", async () => {
    const handshakeAddress = await freeTcpAddress();
    const connecting = openConnection({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 60_000 },
    });
    connecting.catch(() => undefined);
    await untilListening(handshakeAddress);
    runtimeHost().crashForTesting("crash during connect");
    await expect(withTimeout(connecting, 10_000, "connect failure")).rejects.toBeInstanceOf(
      RuntimeCrashedError,
    );
    // Closed by the runtime itself, well before the host's 5 s terminate() fallback (which, with a
    // receive still pending on the handshake socket, would abort this whole process).
    await withTimeout(untilBindable(handshakeAddress), 3_000, "handshake address released");
  });

  it("attaching to a connection of a crashed runtime fails with RuntimeCrashedError", async () => {
    const handshakeAddress = ipcAddress("crash2");
    engines = await startEngines(handshakeAddress, [{ engineIndices: [0] }]);
    const main = await openConnection({ transport: { mode: "handshake-owner", handshakeAddress } });
    const handle: ConnectionHandle = main.handle;
    runtimeHost().crashForTesting("second crash");
    await withTimeout(
      new Promise<void>((resolve) => {
        if (main.healthError) resolve();
        main.onHealthChange(() => resolve());
      }),
      10_000,
      "crash noticed",
    );
    const worker = new TestThread();
    threads.push(worker);
    await expect(worker.call("attach", { handle })).rejects.toMatchObject({ name: "RuntimeCrashedError" });
  });
});
