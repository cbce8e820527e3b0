// How long a message takes to reach a thread that was idle: the thread hop an engine step pays (the runtime
// thread posts one message per step, every ~10 ms; the owner thread sleeps in its event loop in between).
// The links bench (links.bench.mjs) measures hot ping-pong; this one measures the wake from idle, which is
// what the engine → consumer latency pays. Worker → main, one message every GAP_MS, SIZE bytes of frames
// (an engine step of 256 outputs is ~8 KB, of 1,024 ~32 KB), latency = receive time − send time (one clock:
// performance.timeOrigin + performance.now() on both threads), p50 / p90 / p99 over N messages.
//   bc: BroadcastChannel (the previous design's link); port-clone / port-transfer: a MessagePort (frames cloned /
//   their buffer transferred); sab: the bytes written into a SharedArrayBuffer and the receiver woken by
//   Atomics.notify → Atomics.waitAsync (copied out on receipt).
// Run: node packages/runtime/bench/wake.bench.mjs   (SIZE=32000 N=400 GAP_MS=10 to change)
import { BroadcastChannel, isMainThread, MessageChannel, Worker, workerData } from "node:worker_threads";

const SIZE = Number(process.env.SIZE ?? 8_000);
const N = Number(process.env.N ?? 400);
const GAP_MS = Number(process.env.GAP_MS ?? 10);
const WARMUP = 50;
const now = () => performance.timeOrigin + performance.now();

if (isMainThread) {
  console.log(
    `wake from idle: worker → main, ${SIZE} B every ${GAP_MS} ms, ${N} messages (first ${WARMUP} dropped)`,
  );
  console.log("| link | p50 | p90 | p99 |");
  console.log("| --- | --- | --- | --- |");
  for (const kind of ["bc", "port-clone", "port-transfer", "sab"]) {
    const name = `wake-bench-${kind}`;
    const channel = new BroadcastChannel(name);
    const { port1, port2 } = new MessageChannel();
    const sab = new SharedArrayBuffer(16 + SIZE);
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { kind, name, port: port2, sab },
      transferList: [port2],
    });
    const delays = [];
    await new Promise((resolve) => {
      const got = (sentAt) => {
        delays.push(now() - sentAt);
        if (delays.length === N) resolve();
      };
      if (kind === "bc") channel.onmessage = (event) => got(event.data.sentAt);
      else if (kind !== "sab") port1.on("message", (m) => got(m.sentAt));
      else {
        const control = new Int32Array(sab, 0, 2);
        const sentAt = new Float64Array(sab, 8, 1);
        let seen = 0;
        const loop = async () => {
          while (delays.length < N) {
            const wait = Atomics.waitAsync(control, 0, seen);
            if (wait.async) await wait.value;
            seen = Atomics.load(control, 0);
            const at = sentAt[0];
            new Uint8Array(sab, 16, SIZE).slice(); // copied out, as a receiver must
            got(at);
          }
        };
        void loop();
      }
    });
    await worker.terminate();
    channel.close();
    port1.close();
    const sorted = delays.slice(WARMUP).sort((a, b) => a - b);
    const q = (p) => `${Math.round(sorted[Math.floor(sorted.length * p)] * 1000)} µs`;
    console.log(`| ${kind} | ${q(0.5)} | ${q(0.9)} | ${q(0.99)} |`);
  }
} else {
  const { kind, name, port, sab } = workerData;
  const channel = new BroadcastChannel(name);
  const control = new Int32Array(sab, 0, 2);
  const sentAt = new Float64Array(sab, 8, 1);
  const source = new Uint8Array(SIZE).fill(7);
  setInterval(() => {
    if (kind === "sab") {
      sentAt[0] = now(); // before the copy: the sender's copy counts, as the clone counts for the others
      new Uint8Array(sab, 16, SIZE).set(source);
      Atomics.add(control, 0, 1);
      Atomics.notify(control, 0);
      return;
    }
    const frames = [source.slice()];
    const message = { t: "frames", frames, slots: new Int32Array(256), sentAt: now() };
    if (kind === "bc") channel.postMessage(message);
    else if (kind === "port-clone") port.postMessage(message);
    else port.postMessage(message, [frames[0].buffer]);
  }, GAP_MS);
}
