// BroadcastChannel link vs a MessagePort per peer, measured between two threads of this process (the
// figures behind the README's "Port lanes instead of BroadcastChannels"). Each figure: one worker thread, N messages of two
// frames (300 B + 40 B, an engine step of a few outputs), worker → main.
//   throughput: messages/s received on the main thread (BroadcastChannel, port with clone, port with
//     transfer of the frames' buffers);
//   latency: ping-pong round trip main → worker → main, p50 / p99 over PINGS rounds;
//   dead-thread detection: time from worker.terminate() until the main side can tell (a port emits
//     "close"; a BroadcastChannel never tells: the previous design needed a sentinel's heartbeat, 2 s).
// Run: node packages/runtime/bench/links.bench.mjs
import { BroadcastChannel, MessageChannel, Worker } from "node:worker_threads";

const N = Number(process.env.N ?? 100_000);
const PINGS = Number(process.env.PINGS ?? 2_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const WORKER = `
const { workerData, BroadcastChannel } = require("node:worker_threads");
const { kind, n, name, port, pings } = workerData;
const frames = () => [new Uint8Array(300), new Uint8Array(40)];
const out = kind === "bc" ? new BroadcastChannel(name) : port;
const send = (m, transfer) => (kind === "bc" ? out.postMessage(m) : out.postMessage(m, transfer));
out.onmessage = (event) => {
  const m = event.data;
  if (m.t === "go") {
    for (let i = 0; i < n; i++) {
      const f = frames();
      send({ t: "frames", f }, kind === "transfer" ? f.map((x) => x.buffer) : undefined);
    }
    send({ t: "end" });
  } else if (m.t === "ping") {
    send({ t: "pong", i: m.i, f: frames() });
  } else if (m.t === "close") {
    out.close();
  }
};
if (kind !== "bc") port.start?.();
send({ t: "ready" });
`;

function start(kind) {
  const name = `links-bench-${kind}-${Math.random()}`;
  if (kind === "bc") {
    const channel = new BroadcastChannel(name);
    const worker = new Worker(WORKER, { eval: true, workerData: { kind, n: N, name, pings: PINGS } });
    return { worker, end: channel, post: (m) => channel.postMessage(m) };
  }
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { kind, n: N, port: port2, pings: PINGS },
    transferList: [port2],
  });
  return { worker, end: port1, post: (m) => port1.postMessage(m) };
}

function next(end, predicate) {
  return new Promise((resolve) => {
    end.onmessage = (event) => {
      if (predicate(event.data)) resolve(event.data);
    };
  });
}

async function throughput(kind) {
  const link = start(kind);
  await next(link.end, (m) => m.t === "ready");
  let received = 0;
  const done = new Promise((resolve) => {
    link.end.onmessage = (event) => {
      if (event.data.t === "frames") received++;
      else if (event.data.t === "end") resolve();
    };
  });
  const t0 = performance.now();
  link.post({ t: "go" });
  await done;
  const seconds = (performance.now() - t0) / 1000;
  await link.worker.terminate();
  link.end.close();
  return received / seconds;
}

async function latency(kind) {
  const link = start(kind);
  await next(link.end, (m) => m.t === "ready");
  const samples = [];
  for (let i = 0; i < PINGS; i++) {
    const t0 = performance.now();
    const pong = next(link.end, (m) => m.t === "pong" && m.i === i);
    link.post({ t: "ping", i });
    await pong;
    samples.push((performance.now() - t0) * 1000);
  }
  await link.worker.terminate();
  link.end.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.floor(samples.length * 0.99)] };
}

async function detection(kind) {
  if (kind === "bc") return null;
  const link = start(kind);
  await next(link.end, (m) => m.t === "ready");
  const closed = new Promise((resolve) => link.end.once("close", () => resolve(performance.now())));
  const t0 = performance.now();
  await link.worker.terminate();
  const at = await Promise.race([closed, new Promise((r) => setTimeout(() => r(null), 5_000))]);
  return at === null ? null : at - t0;
}

const fmt = (x) => (x === null ? "never" : x >= 1e3 ? `${(x / 1e3).toFixed(0)} k` : x.toFixed(0));
console.log(
  `node ${process.version}, N=${N}, PINGS=${PINGS}, rounds=${ROUNDS} (best throughput, median latency)`,
);
for (const kind of ["bc", "clone", "transfer"]) {
  const rates = [];
  const lat = [];
  const det = [];
  for (let r = 0; r < ROUNDS; r++) {
    rates.push(await throughput(kind));
    lat.push(await latency(kind));
    det.push(await detection(kind));
  }
  lat.sort((a, b) => a.p50 - b.p50);
  const med = lat[Math.floor(lat.length / 2)];
  console.log(
    `${kind.padEnd(8)} ${fmt(Math.max(...rates))} msg/s (rounds ${rates.map(fmt).join(", ")}); ` +
      `round trip p50 ${med.p50.toFixed(0)} µs, p99 ${med.p99.toFixed(0)} µs; ` +
      `terminate → noticed: ${det.map((d) => (d === null ? "never" : `${d.toFixed(1)} ms`)).join(", ")}`,
  );
}
