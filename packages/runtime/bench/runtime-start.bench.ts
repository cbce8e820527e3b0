// Runtime start as a fresh process sees it: time of the first openConnection (worker thread start, its
// module graph loaded, handshake with a mock engine). Used to decide whether dist/runtime-thread/main.js should
// inline the protocol package (see README, "Layout and build"). Run:
//   pnpm --filter @vllm-engine-core/runtime exec tsx --conditions=@vllm-engine-core/source bench/runtime-start.bench.ts
import { startMockEngine } from "@vllm-engine-core/mock-engine";
import { openConnection } from "../src/index.ts";
import { ipcAddress } from "../test/helpers.ts";

const handshakeAddress = ipcAddress("start");
const engine = await startMockEngine({ handshakeAddress, engineIndices: [0], stepMs: 0 });
const t = performance.now();
const connection = await openConnection({ transport: { mode: "handshake-owner", handshakeAddress } });
console.log(`first openConnection: ${(performance.now() - t).toFixed(1)} ms`);
await connection.shutdown();
await engine.stop();
