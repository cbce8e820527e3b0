// Socket files: the engine's parent removes the stale files at the addresses it handed the engine however the
// engine ended, never a file a live frontend still serves; the raw test frontend removes what it bound.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Router } from "zeromq";
import { type MockEngineProcess, removeStaleIpcFiles, startMockEngine } from "../src/index.js";
import { ipcAddress, RawFrontend } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "mock-engine-ipc-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pathOf = (address: string) => address.slice("ipc://".length);

let frontend: RawFrontend | undefined;
const engines: MockEngineProcess[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.stop()));
  await frontend?.close();
  frontend = undefined;
});

/** A listening Unix socket at `path` in a child process, SIGKILLed: what a killed binder leaves behind. */
async function staleSocketFile(path: string): Promise<void> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["-e", "require('net').createServer().listen(process.argv[1], () => console.log('up'))", path],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`listener exited early (code ${code})`)));
  });
  child.kill("SIGKILL");
  await new Promise((resolve) => child.once("close", resolve));
}

describe("removeStaleIpcFiles", () => {
  it("removes a socket file nobody listens on, keeps a live one, a regular file and non-file endpoints", async () => {
    const stale = join(dir, "stale.sock");
    await staleSocketFile(stale);
    expect(existsSync(stale)).toBe(true);

    const live = join(dir, "live.sock");
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(live, resolve));
    const regular = join(dir, "regular.sock");
    writeFileSync(regular, "not a socket");
    try {
      const removed = removeStaleIpcFiles([
        `ipc://${stale}`,
        `ipc://${live}`,
        `ipc://${regular}`,
        `ipc://${join(dir, "missing.sock")}`,
        "ipc://@abstract-name",
        "ipc://relative.sock",
        "tcp://127.0.0.1:5555",
        undefined,
      ]);
      expect(removed).toEqual([stale]);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(existsSync(regular)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the launcher removes the files at the addresses it handed the engine", () => {
  it("after a SIGKILL of the engine, once the frontend that bound the address is gone", async () => {
    const handshakeAddress = ipcAddress("killed");
    // A plain zeromq listener: closing it leaves its socket file behind, as a killed frontend would.
    const handshake = new Router({ linger: 0 });
    await handshake.bind(handshakeAddress);
    const engine = await startMockEngine({ handshakeAddress });
    engines.push(engine);
    await engine.waitForEvent((e) => e.event === "hello");
    handshake.close();
    expect(existsSync(pathOf(handshakeAddress))).toBe(true);

    engine.kill("SIGKILL");
    expect((await engine.exited).signal).toBe("SIGKILL");
    expect(existsSync(pathOf(handshakeAddress))).toBe(false);
  });

  it("but not while a frontend still listens there: the next engine connects to the same address", async () => {
    frontend = await RawFrontend.create();
    const first = await startMockEngine({ handshakeAddress: frontend.handshakeAddress });
    engines.push(first);
    await frontend.connect([0]);
    first.kill("SIGKILL");
    await first.exited;
    expect(existsSync(pathOf(frontend.handshakeAddress))).toBe(true);

    const seen = frontend.handshakeMessages.items.length;
    engines.push(await startMockEngine({ handshakeAddress: frontend.handshakeAddress }));
    const hello = await frontend.handshakeMessages.wait(
      (m) => m.status?.status === "HELLO",
      10_000,
      "HELLO of the second engine",
      seen,
    );
    expect(hello.engineIndex).toBe(0);
  });
});

describe("the raw test frontend", () => {
  it("removes the socket files it bound when it closes", async () => {
    const fe = await RawFrontend.create({ frontends: 2 });
    const paths = [fe.handshakeAddress, ...fe.inputAddresses, ...fe.outputAddresses].map(pathOf);
    expect(paths.every((path) => existsSync(path))).toBe(true);
    await fe.close();
    expect(paths.filter((path) => existsSync(path))).toEqual([]);
  });
});
