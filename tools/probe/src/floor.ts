// The machine's floor for "engine send → receive": a bare libzmq PUSH → PULL hop between two processes
// on loopback TCP, 8-byte CLOCK_MONOTONIC stamps at the engine's step rate, receiver idle. No engine, no
// decode, no thread hop: whatever tail this shows, every design on this machine pays too.
import { fork } from "node:child_process";
import * as zmq from "zeromq";
import { monotonicNowMs } from "./clock.js";
import { type Summary, summarize } from "./stats.js";

export async function measureFloor(o: {
  intervalMs: number;
  warmupMs: number;
  measureMs: number;
}): Promise<Summary> {
  const pull = new zmq.Pull({ linger: 0 });
  await pull.bind("tcp://127.0.0.1:0");
  const child = fork(
    new URL("./floor-sender.js", import.meta.url),
    [pull.lastEndpoint!, String(o.intervalMs)],
    {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const delays: number[] = [];
  const start = monotonicNowMs();
  try {
    for (;;) {
      const [frame] = await pull.receive();
      const now = monotonicNowMs();
      if (now - start > o.warmupMs + o.measureMs) break;
      if (now - start > o.warmupMs && frame !== undefined) delays.push(now - frame.readDoubleLE(0));
    }
  } finally {
    child.disconnect();
    pull.close();
    await exited;
  }
  return summarize(delays);
}
