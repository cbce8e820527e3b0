// zeromq is loaded on the runtime thread only: never on the main thread, the connecting thread or a
// consuming thread. Probes: the thread's CommonJS module cache (zeromq is CommonJS) and every native addon
// the thread dlopens (zeromq's binding). The positive control shows the probes do see zeromq when a thread
// loads it.
import { createRequire } from "node:module";
import { expectedTokens, type MockEngineProcess } from "@vllm-engine-core/mock-engine";
import { afterAll, describe, expect, it } from "vitest";
import {
  collector,
  ipcAddress,
  PROMPT,
  request,
  startEngines,
  stopAll,
  TestThread,
  withTimeout,
} from "./helpers.ts";

// Installed before the runtime is imported (dynamically, below).
const dlopened: string[] = [];
const originalDlopen = process.dlopen;
process.dlopen = function (
  this: unknown,
  module: { exports: unknown },
  filename: string,
  ...rest: [number?]
) {
  dlopened.push(filename);
  return originalDlopen.call(this, module, filename, ...rest);
} as typeof process.dlopen;
const requireHere = createRequire(import.meta.url);
const mainProbe = () => ({
  cjs: Object.keys(requireHere.cache).filter((path) => path.includes("zeromq")),
  dlopened: dlopened.filter((path) => path.includes("zeromq")),
});

interface Probe {
  cjs: string[];
  dlopened: string[];
}

const threads: TestThread[] = [];
let engines: MockEngineProcess[] = [];

afterAll(async () => {
  await Promise.all(threads.map((t) => t.terminate()));
  await stopAll(engines);
});

describe("zeromq stays on the runtime thread", () => {
  it("is not loaded on the main, connecting or consuming threads", async () => {
    const runtime = await import("../src/index.ts");
    const handshakeAddress = ipcAddress("iso");
    engines = await startEngines(handshakeAddress, [{ engineIndices: [0] }]);

    const opener = new TestThread();
    const consumer = new TestThread();
    threads.push(opener, consumer);
    const handle = await opener.call("open", {
      config: { transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 } },
    });
    await consumer.call("attach", { handle });
    await consumer.call("submit", { request: request("iso-worker", 5) });
    const stream = await consumer.call<{ tokens: number[] }>("wait", { requestId: "iso-worker" });
    expect(stream.tokens).toEqual(expectedTokens("iso-worker", PROMPT, 5));

    const main = await runtime.attachConnection(handle as never);
    const mine = collector();
    await main.submit(request("iso-main", 5), mine.sink);
    expect((await withTimeout(mine.done, 10_000, "main stream")).tokens).toHaveLength(5);

    expect(await opener.call<Probe>("probe")).toEqual({ cjs: [], dlopened: [] });
    expect(await consumer.call<Probe>("probe")).toEqual({ cjs: [], dlopened: [] });
    expect(mainProbe()).toEqual({ cjs: [], dlopened: [] });
    await main.shutdown();
  });

  it("positive control: the same probes see zeromq in a thread that loads it", async () => {
    const control = new TestThread();
    threads.push(control);
    expect(await control.call<Probe>("probe")).toEqual({ cjs: [], dlopened: [] });
    await control.call("importZeromq");
    const probe = await control.call<Probe>("probe");
    expect(probe.cjs.some((path) => path.endsWith("/zeromq/lib/index.js"))).toBe(true);
    expect(probe.dlopened.length).toBeGreaterThan(0);
  });
});
