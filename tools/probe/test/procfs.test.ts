// Real /proc, real epoll, real zeromq sockets on this thread and on a worker thread.
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import * as zmq from "zeromq";
import { createThreadMarker, type ThreadMarkerHandle } from "../src/net.js";
import { analyzeDescriptors, baselineEventfdsOf } from "../src/procfs/analyze.js";
import { procfsAvailable, readProcSnapshot } from "../src/procfs/snapshot.js";

const ZMQ_FD = 14;
const zmqFd = (s: zmq.Socket) =>
  (s as unknown as { getInt32Option(o: number): number }).getInt32Option(ZMQ_FD);
const portOf = (endpoint: string) => Number(/:(\d+)$/.exec(endpoint)![1]);

// A stand-in for the runtime: a worker thread that owns a PULL socket with a receive pending.
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const zmq = require(workerData.zeromq);
const pull = new zmq.Pull({ linger: 0 });
pull.bind("tcp://127.0.0.1:0").then(() => {
  pull.receive().catch(() => {});
  parentPort.postMessage({ endpoint: pull.lastEndpoint, fd: pull.getInt32Option(14) });
});
parentPort.once("message", () => { pull.close(); parentPort.close(); });
`;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("procfs on this platform", () => {
  it("is available exactly on Linux", () => {
    expect(procfsAvailable()).toBe(process.platform === "linux");
  });
});

describe.runIf(procfsAvailable())("descriptor ownership, measured for real", () => {
  it("finds this thread's loop by its marker, with exactly one libuv wake-up eventfd as baseline", async () => {
    const marker = (await createThreadMarker()) as ThreadMarkerHandle;
    cleanups.push(() => marker.close());
    const baseline = baselineEventfdsOf(readProcSnapshot(), marker.fd);
    expect(baseline).toHaveLength(1);
  });

  it("sees a pending receive's ZMQ_FD on the owning thread's epoll and the TCP descriptors in libzmq's thread", async () => {
    const marker = (await createThreadMarker()) as ThreadMarkerHandle;
    cleanups.push(() => marker.close());
    const baseline = baselineEventfdsOf(readProcSnapshot(), marker.fd)!;
    const pull = new zmq.Pull({ linger: 0 });
    const push = new zmq.Push({ linger: 0 });
    cleanups.push(() => {
      pull.close();
      push.close();
    });
    await pull.bind("tcp://127.0.0.1:0");
    push.connect(pull.lastEndpoint!);
    const pending = pull.receive().catch(() => undefined);
    await sleep(100);

    const report = analyzeDescriptors(
      readProcSnapshot(),
      [{ label: "test thread", markerFd: marker.fd, baselineEventfds: baseline }],
      [portOf(pull.lastEndpoint!)],
    );
    const mine = report.loops.find((l) => l.label === "test thread")!;
    expect(mine.zmqSignalerFds).toEqual([zmqFd(pull)]); // the idle PUSH has nothing pending: not watched
    const libzmq = report.loops.filter((l) => l.kind === "libzmq");
    // listener + accepted connection (PULL side) + connecting socket (PUSH side)
    expect(libzmq.flatMap((l) => l.zmqTcp)).toHaveLength(3);
    expect(report.loops.filter((l) => l.kind === "node-loop").flatMap((l) => l.zmqTcp)).toEqual([]);
    expect(report.runtime).toBeUndefined();

    await push.send("x");
    await pending;
  });

  it("identifies an unmarked worker thread that owns a socket as the runtime, with its thread id", async () => {
    const marker = (await createThreadMarker()) as ThreadMarkerHandle;
    cleanups.push(() => marker.close());
    const baseline = baselineEventfdsOf(readProcSnapshot(), marker.fd)!;
    const zeromq = createRequire(import.meta.url).resolve("zeromq");
    const worker = new Worker(WORKER, { eval: true, workerData: { zeromq } });
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    cleanups.push(async () => {
      worker.postMessage("close");
      await exited;
    });
    const { endpoint, fd } = await new Promise<{ endpoint: string; fd: number }>((resolve) =>
      worker.once("message", resolve),
    );
    const analyze = () =>
      analyzeDescriptors(
        readProcSnapshot(),
        [{ label: "test thread", markerFd: marker.fd, baselineEventfds: baseline }],
        [portOf(endpoint)],
      );
    // The worker's thread id is known once a snapshot catches it waiting in epoll (it is idle).
    let report = analyze();
    for (let i = 0; i < 50 && report.runtime?.tid === undefined; i++) {
      await sleep(20);
      report = analyze();
    }
    expect(report.runtime).toMatchObject({ label: "runtime thread", kind: "node-loop", zmqSignalerCount: 1 });
    expect(report.runtime!.tid).toBeGreaterThan(process.pid); // a thread of this process, not the main one
    expect(report.runtime!.eventfds).toContain(fd);
    expect(report.loops.find((l) => l.label === "test thread")!.zmqSignalerCount).toBe(0);
  });
});
