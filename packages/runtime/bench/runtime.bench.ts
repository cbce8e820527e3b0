// Runtime figures on this machine: runtime start, connect, outputs/s delivered to consuming threads
// (raw frames forwarded to each owner thread and decoded there), and how
// long the runtime takes to notice a terminated thread. Run: pnpm --filter @vllm-engine-core/runtime bench
import { startMockEngine } from "@vllm-engine-core/mock-engine";
import { openConnection, type RuntimeConnection } from "../src/index.ts";
import { collector, ipcAddress, request, TestThread } from "../test/helpers.ts";

const STREAMS = Number(process.env.STREAMS ?? 256);
const TOKENS = Number(process.env.TOKENS ?? 400);

async function consumeOnMain(connection: RuntimeConnection, prefix: string, count: number): Promise<number> {
  const streams = [];
  for (let i = 0; i < count; i++) {
    const c = collector();
    streams.push(c.done);
    await connection.submit(request(`${prefix}${i}`, TOKENS), c.sink);
  }
  const results = await Promise.all(streams);
  return results.reduce((n, r) => n + r.outputs.length, 0);
}

async function consumeOnThread(thread: TestThread, prefix: string, count: number): Promise<number> {
  for (let i = 0; i < count; i++) await thread.call("submit", { request: request(`${prefix}${i}`, TOKENS) });
  let outputs = 0;
  for (let i = 0; i < count; i++) {
    outputs += (await thread.call<{ tokens: number[] }>("wait", { requestId: `${prefix}${i}` })).tokens
      .length;
  }
  return outputs;
}

const handshakeAddress = ipcAddress("bench");
const engine = await startMockEngine({ handshakeAddress, engineIndices: [0], stepMs: 0 });
let t = performance.now();
const connection = await openConnection({ transport: { mode: "handshake-owner", handshakeAddress } });
console.log(`first openConnection (runtime start + handshake): ${(performance.now() - t).toFixed(0)} ms`);

const thread = new TestThread();
await thread.call("attach", { handle: connection.handle });

for (const round of [1, 2]) {
  t = performance.now();
  const one = await consumeOnMain(connection, `main-only-${round}-`, STREAMS);
  const oneSec = (performance.now() - t) / 1000;
  t = performance.now();
  const [a, b] = await Promise.all([
    consumeOnMain(connection, `split-main-${round}-`, STREAMS / 2),
    consumeOnThread(thread, `split-thread-${round}-`, STREAMS / 2),
  ]);
  const twoSec = (performance.now() - t) / 1000;
  console.log(
    `round ${round}: ${STREAMS} streams x ${TOKENS} tokens — one thread (raw frames): ` +
      `${(one / oneSec).toFixed(0)} outputs/s; split over two threads (subsets): ${((a + b) / twoSec).toFixed(0)} outputs/s`,
  );
}

await thread.terminate();
await connection.shutdown();
await engine.stop();

// Death detection: a worker with a live (slow) request is terminated; time until the engine logs the ABORT.
const slowAddress = ipcAddress("bench-slow");
const slow = await startMockEngine({ handshakeAddress: slowAddress, engineIndices: [0], stepMs: 10 });
const slowConnection = await openConnection({
  transport: { mode: "handshake-owner", handshakeAddress: slowAddress },
});
for (let i = 0; i < 3; i++) {
  const doomed = new TestThread();
  await doomed.call("attach", { handle: slowConnection.handle });
  await doomed.call("submit", { request: request(`doomed-${i}`, 3_000) });
  await slow.waitForEvent((e) => e.event === "add" && e.requestId === `doomed-${i}`, 10_000);
  t = performance.now();
  await doomed.terminate();
  await slow.waitForEvent((e) => e.event === "abort" && (e.requestIds ?? []).includes(`doomed-${i}`), 20_000);
  console.log(
    `terminated thread noticed, its request aborted on the engine after ${(performance.now() - t).toFixed(0)} ms`,
  );
}
await slowConnection.shutdown();
await slow.stop();
