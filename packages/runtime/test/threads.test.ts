// Connections across threads: opened on a worker, used on main, outliving the opener; per-thread output
// routing; a busy-blocked opener; a terminated thread's requests aborted on the engine.
import { connect } from "node:net";
import { expectedTokens, type MockEngineProcess, reservedTcpPorts } from "@vllm-engine-core/mock-engine";
import { FinishReason } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  attachConnection,
  type ConnectionHandle,
  openConnection,
  type RuntimeConnection,
} from "../src/index.ts";
import {
  collector,
  ipcAddress,
  PROMPT,
  request,
  sleep,
  startEngines,
  stopAll,
  TestThread,
  withTimeout,
} from "./helpers.ts";

interface ThreadStream {
  tokens: number[];
  finishReason: number | null;
  error: { name: string; message: string } | null;
  batches: number;
}

let engines: MockEngineProcess[] = [];
let threads: TestThread[] = [];
let connections: RuntimeConnection[] = [];

afterEach(async () => {
  for (const connection of connections) await connection.shutdown();
  connections = [];
  await Promise.all(threads.map((thread) => thread.terminate()));
  threads = [];
  await stopAll(engines);
  engines = [];
});

async function enginesFor(
  count: number,
  stepMs = 2,
): Promise<{ handshakeAddress: string; engineCount: number }> {
  const handshakeAddress = ipcAddress("hs");
  engines = await startEngines(handshakeAddress, [
    { engineIndices: Array.from({ length: count }, (_, i) => i), stepMs },
  ]);
  return { handshakeAddress, engineCount: count };
}

function thread(): TestThread {
  const t = new TestThread();
  threads.push(t);
  return t;
}

async function openOn(t: TestThread, target: { handshakeAddress: string; engineCount: number }) {
  return t.call<ConnectionHandle>("open", {
    config: { transport: { mode: "handshake-owner", ...target, readyTimeoutMs: 20_000 } },
  });
}

async function attachHere(handle: ConnectionHandle): Promise<RuntimeConnection> {
  const connection = await attachConnection(handle);
  connections.push(connection);
  return connection;
}

/** Whether something listens on the port (a plain connect attempt). */
function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitUntil(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await sleep(50);
  }
}

/** Longer than it takes the runtime to see a terminated thread's lane close (it is told at once). */
const DETECTION_WINDOW_MS = 1_000;

const abortsOf = (engine: MockEngineProcess, requestId: string) =>
  engine.events.filter((e) => e.event === "abort" && (e.requestIds ?? []).includes(requestId));

describe("connections across threads", () => {
  it("a connection opened on a worker keeps working on main after that worker is terminated", async () => {
    const target = await enginesFor(1, 5);
    const opener = thread();
    const handle = await openOn(opener, target);
    const main = await attachHere(handle);
    expect(main.info.engines.map((e) => e.index)).toEqual([0]);

    // A request in flight across the opener's termination, and its detection window.
    const during = collector();
    await main.submit(request("during", 300), during.sink);
    await opener.terminate();
    const early = collector();
    await main.submit(request("early", 3), early.sink);
    expect((await withTimeout(early.done, 10_000, "right after terminate")).tokens).toHaveLength(3);
    await sleep(DETECTION_WINDOW_MS);

    const after = collector();
    await main.submit(request("after", 5), after.sink);
    const [d, a] = await Promise.all([
      withTimeout(during.done, 15_000, "during"),
      withTimeout(after.done, 10_000, "after"),
    ]);
    expect(d.tokens).toEqual(expectedTokens("during", PROMPT, 300));
    expect(d.finishReason).toBe(FinishReason.LENGTH);
    expect(a.tokens).toEqual(expectedTokens("after", PROMPT, 5));
    expect(abortsOf(engines[0]!, "during")).toHaveLength(0);
    expect(main.healthError).toBeUndefined();
  });

  it("each thread receives only its own requests' outputs, one sink call per engine step", async () => {
    const target = await enginesFor(2, 5);
    const consumer = thread();
    const opener = thread();
    const handle = await openOn(opener, target);
    await consumer.call("attach", { handle });
    const main = await attachHere(handle);

    // Interleave requests of three threads on the same engines and steps.
    const mine = [collector(), collector()];
    await main.submit(request("main-0", 40), mine[0]!.sink);
    await consumer.call("submit", { request: request("cons-0", 40) });
    await opener.call("submit", { request: request("open-0", 40) });
    await main.submit(request("main-1", 40), mine[1]!.sink);
    await consumer.call("submit", { request: request("cons-1", 40) });

    const [c0, c1, o0] = await Promise.all([
      consumer.call<ThreadStream>("wait", { requestId: "cons-0" }),
      consumer.call<ThreadStream>("wait", { requestId: "cons-1" }),
      opener.call<ThreadStream>("wait", { requestId: "open-0" }),
    ]);
    for (const [id, stream] of [
      ["cons-0", c0],
      ["cons-1", c1],
      ["open-0", o0],
    ] as const) {
      expect(stream.error).toBeNull();
      expect(stream.tokens).toEqual(expectedTokens(id, PROMPT, 40));
      expect(stream.finishReason).toBe(FinishReason.LENGTH);
      // The mock emits one token per step: one sink call per step, never per token or per message.
      expect(stream.batches).toBe(40);
    }
    for (const [i, m] of mine.entries()) {
      const result = await withTimeout(m.done, 10_000, `main-${i}`);
      expect(result.tokens).toEqual(expectedTokens(`main-${i}`, PROMPT, 40));
      expect(result.batches.every((b) => b.size === 1)).toBe(true);
      // Nothing of the other threads' requests leaked here.
      expect(new Set(result.outputs.map((o) => o.requestId))).toEqual(new Set([`main-${i}`]));
    }
  });

  it("outputs reach a consumer while the connecting thread is busy-blocked, and the blocked thread is not declared dead", async () => {
    const target = await enginesFor(1, 2);
    const opener = thread();
    const handle = await openOn(opener, target);
    const main = await attachHere(handle);
    // The opener owns a live request across its blocked period (a blocked thread is alive: its lane stays open).
    await opener.call("submit", { request: request("blocked-owner", 2_500) });
    const spinMs = 3_500;
    const spinning = opener.call<number>("spin", { ms: spinMs });
    let spinDone = false;
    void spinning.then(() => {
      spinDone = true;
    });
    await sleep(100);

    const started = performance.now();
    const live = collector();
    await main.submit(request("while-blocked", 30), live.sink);
    const result = await withTimeout(live.done, 10_000, "outputs while the opener spins");
    expect(result.tokens).toEqual(expectedTokens("while-blocked", PROMPT, 30));
    expect(spinDone).toBe(false);
    expect(performance.now() - started).toBeLessThan(spinMs);

    await spinning;
    const owned = await opener.call<ThreadStream>("wait", { requestId: "blocked-owner" });
    expect(owned.error).toBeNull();
    expect(owned.tokens).toEqual(expectedTokens("blocked-owner", PROMPT, 2_500));
    expect(abortsOf(engines[0]!, "blocked-owner")).toHaveLength(0);
  });

  it("a terminated thread's live requests are aborted on the engine; other threads' requests continue", async () => {
    const target = await enginesFor(2, 5);
    const doomed = thread();
    const opener = thread();
    const handle = await openOn(opener, target);
    await doomed.call("attach", { handle });
    const main = await attachHere(handle);

    await doomed.call("submit", { request: request("doomed-0", 100_000) });
    await doomed.call("submit", { request: request("doomed-1", 100_000) });
    const survivor = collector();
    await main.submit(request("survivor", 100_000), survivor.sink);
    for (const id of ["doomed-0", "doomed-1", "survivor"]) {
      await engines[0]!.waitForEvent((e) => e.event === "add" && e.requestId === id, 10_000);
    }

    const killedAt = performance.now();
    await doomed.terminate();
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("doomed-0"),
      10_000,
    );
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("doomed-1"),
      10_000,
    );
    const detectedMs = performance.now() - killedAt;
    // The lane's close tells the runtime at once (it used to wait for a heartbeat to go stale: 2 s or more).
    expect(detectedMs).toBeLessThan(DETECTION_WINDOW_MS);

    const before = survivor.result.outputs.length;
    await sleep(200);
    expect(survivor.result.outputs.length).toBeGreaterThan(before);
    expect(survivor.result.error).toBeUndefined();
    expect(abortsOf(engines[0]!, "survivor")).toHaveLength(0);
    expect(await main.abort(["survivor", "doomed-0"])).toEqual(["survivor"]);
  });

  it("a thread terminated in the middle of its connect: the runtime cancels it and frees its addresses", async () => {
    const [hsPort, inPort, outPort] = await reservedTcpPorts(3);
    const addressesOf = (port: number) => `tcp://127.0.0.1:${port}`;
    const transport = {
      mode: "handshake-owner" as const,
      handshakeAddress: addressesOf(hsPort!),
      localInputAddress: addressesOf(inPort!),
      localOutputAddress: addressesOf(outPort!),
      readyTimeoutMs: 30_000,
    };
    const connecting = thread();
    // No engine yet: the connect waits for HELLO with every socket bound.
    const pending = connecting.call("open", { config: { transport } });
    pending.catch(() => {});
    await waitUntil(() => portInUse(hsPort!), 10_000, "handshake socket bound");
    await connecting.terminate();
    // Released once the runtime notices the thread is gone (the connect alone would wait 30 s).
    await waitUntil(async () => !(await portInUse(hsPort!)), 5_000, "handshake port released");

    engines = await startEngines(transport.handshakeAddress, [{ engineIndices: [0] }]);
    const connection = await openConnection({ transport });
    connections.push(connection);
    expect(connection.info.inputAddress).toBe(transport.localInputAddress);
    const stream = collector();
    await connection.submit(request("after-cancel", 3), stream.sink);
    expect((await withTimeout(stream.done, 10_000, "stream")).tokens).toHaveLength(3);
  });

  it("detach on a worker aborts that thread's requests and leaves the connection to the others", async () => {
    const target = await enginesFor(1, 5);
    const worker = thread();
    const opener = thread();
    const handle = await openOn(opener, target);
    await worker.call("attach", { handle });
    await worker.call("submit", { request: request("w-long", 100_000) });
    await engines[0]!.waitForEvent((e) => e.event === "add" && e.requestId === "w-long", 10_000);
    await worker.call("detach");
    await engines[0]!.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds ?? []).includes("w-long"),
      5_000,
    );
    const stream = await worker.call<ThreadStream>("wait", { requestId: "w-long" });
    expect(stream.error?.name).toBe("ClientClosedError");
    // The thread ends by itself once it has nothing left (no link, timer or sentinel holds it).
    await worker.call("exit");
    expect(await withTimeout(worker.exited, 10_000, "worker exit")).toBe(0);

    const main = await attachHere(handle);
    const after = collector();
    await main.submit(request("after-detach", 4), after.sink);
    expect((await withTimeout(after.done, 10_000, "after detach")).tokens).toHaveLength(4);
  });
});
