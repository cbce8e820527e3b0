// Codec benchmark: decode of realistic EngineCoreOutputs batches (outputs/s and ratio to a bare
// msgpackr.unpack of the same bytes, measured in the same run) and encode of a typical chat request.
// Run: pnpm bench (tsx --conditions=@vllm-engine-core/source bench/codec.bench.ts)
import { writeFileSync } from "node:fs";
import { unpack } from "msgpackr";
import {
  decodeOutputMessage,
  encodeAddRequest,
  encodeEngineCoreOutputs,
  readOutputRoute,
} from "../src/index.js";
import { chatRequest, logprobsBatch, outputsBatch } from "./fixtures.js";

function measure(fn: () => void, minMs = 1500): { opsPerSec: number; iterations: number } {
  // warm-up
  const warmEnd = performance.now() + 300;
  while (performance.now() < warmEnd) fn();
  let iterations = 0;
  const start = performance.now();
  let now = start;
  while (now - start < minMs) {
    for (let i = 0; i < 16; i++) fn();
    iterations += 16;
    now = performance.now();
  }
  return { opsPerSec: (iterations * 1000) / (now - start), iterations };
}

interface Row {
  case: string;
  bytes: number;
  codecOpsPerSec: number;
  codecItemsPerSec: number;
  msgpackrOpsPerSec?: number;
  ratioToMsgpackr?: number;
}

const rows: Row[] = [];
let sink = 0;

for (const size of [256, 1024]) {
  const frames = encodeEngineCoreOutputs(outputsBatch(size, size));
  const bytes = frames[0]!;
  // Interleave rounds so both sides see the same machine state; keep the best round of each.
  let best = 0;
  let bestBare = 0;
  let bestRoute = 0;
  for (let round = 0; round < 3; round++) {
    const codec = measure(() => {
      const m = decodeOutputMessage(frames);
      if (m.kind === "outputs") sink += m.outputs.outputs.length;
    });
    // The routing-only read (request ids, no values decoded) of the same bytes.
    const route = measure(() => {
      sink += readOutputRoute(bytes).outputCount; // what the runtime reads: no id strings
    });
    bestRoute = Math.max(bestRoute, route.opsPerSec);
    const bare = measure(() => {
      const v = unpack(bytes) as unknown[];
      sink += (v[1] as unknown[]).length;
    });
    best = Math.max(best, codec.opsPerSec);
    bestBare = Math.max(bestBare, bare.opsPerSec);
  }
  rows.push({
    case: `decode EngineCoreOutputs x${size}`,
    bytes: bytes.byteLength,
    codecOpsPerSec: best,
    codecItemsPerSec: best * size,
    msgpackrOpsPerSec: bestBare,
    ratioToMsgpackr: best / bestBare,
  });
  rows.push({
    case: `route EngineCoreOutputs x${size}`,
    bytes: bytes.byteLength,
    codecOpsPerSec: bestRoute,
    codecItemsPerSec: bestRoute * size,
    msgpackrOpsPerSec: bestBare,
    ratioToMsgpackr: bestRoute / bestBare,
  });
}

{
  // Outputs with logprobs: the routing-only read skips the tensors the full decode builds.
  const frames = encodeEngineCoreOutputs(logprobsBatch(256));
  let decode = 0;
  let route = 0;
  for (let round = 0; round < 3; round++) {
    decode = Math.max(
      decode,
      measure(() => {
        const m = decodeOutputMessage(frames);
        if (m.kind === "outputs") sink += m.outputs.outputs.length;
      }).opsPerSec,
    );
    route = Math.max(
      route,
      measure(() => {
        sink += readOutputRoute(frames[0]!).outputCount;
      }).opsPerSec,
    );
  }
  for (const [name, opsPerSec] of [
    ["decode logprobs outputs x256", decode],
    ["route logprobs outputs x256", route],
  ] as const) {
    rows.push({
      case: name,
      bytes: frames[0]!.byteLength,
      codecOpsPerSec: opsPerSec,
      codecItemsPerSec: opsPerSec * 256,
    });
  }
}

{
  let i = 0;
  const sample = encodeAddRequest(chatRequest(0));
  const enc = measure(() => {
    sink += encodeAddRequest(chatRequest(i++)).length;
  });
  rows.push({
    case: "encode chat request (ADD)",
    bytes: sample[1]!.byteLength,
    codecOpsPerSec: enc.opsPerSec,
    codecItemsPerSec: enc.opsPerSec,
  });
}

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined ? "-" : n.toLocaleString("en-US", { maximumFractionDigits: digits });
console.log("");
console.log(
  `${"case".padEnd(34)} ${"bytes".padStart(8)} ${"msgs/s".padStart(12)} ${"items/s".padStart(14)} ${"msgpackr/s".padStart(12)} ${"ratio".padStart(6)}`,
);
for (const r of rows) {
  console.log(
    `${r.case.padEnd(34)} ${fmt(r.bytes).padStart(8)} ${fmt(r.codecOpsPerSec).padStart(12)} ${fmt(r.codecItemsPerSec).padStart(14)} ${fmt(r.msgpackrOpsPerSec).padStart(12)} ${fmt(r.ratioToMsgpackr, 2).padStart(6)}`,
  );
}
const out = new URL("./results.json", import.meta.url);
writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rows, checksum: sink % 1000 }, null, 2)}\n`,
);
console.log(
  `\nwritten ${out.pathname} (ratio = codec decode / bare msgpackr.unpack of the same bytes; goal >= 0.7)`,
);
