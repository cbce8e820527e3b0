// The metrics observer alone, as the client calls it once per delivered output: 1,024 records per engine
// step (one per stream), inter-token latencies only (the steady decode state). Run after a build:
//   node packages/metrics/bench/observer.bench.mjs
const { instrument } = await import(new URL("../dist/index.js", import.meta.url).href);
let observer;
const client = {
  modelName: "m",
  engineIndices: [0],
  maxModelLen: 4096,
  info: { engines: [{ index: 0 }] },
  onSchedulerStats: () => () => {},
  observeOutputs: (o) => {
    observer = o;
    return () => {};
  },
  onSleepStateChange: () => () => {},
  schedulerStats: () => undefined,
  readyResponses: [{ numGpuBlocks: 1, maxModelLen: 4096 }],
};
const inst = instrument(client);
const R = 1024,
  STEPS = 2000;
const recs = Array.from({ length: R }, () => ({
  engineIndex: 0,
  batchTimestamp: 0,
  newTokens: 1,
  timeToFirstToken: NaN,
  prefillStats: null,
  interTokenLatency: 0.02,
  preemptions: 0,
  finished: null,
}));
for (let round = 0; round < 3; round++) {
  const t0 = performance.now();
  for (let s = 0; s < STEPS; s++) {
    const ts = round * 1e4 + s * 0.01;
    for (let r = 0; r < R; r++) {
      const rec = recs[r];
      rec.batchTimestamp = ts;
      rec.interTokenLatency = 0.005 + (r % 50) * 0.002;
      observer(rec);
    }
    await null; // the flush microtask per batch
  }
  const ms = performance.now() - t0;
  console.log("per output", ((ms * 1e6) / (R * STEPS)).toFixed(1), "ns");
}
const text = await inst.registry.metrics();
console.log(
  text
    .split("\n")
    .filter(
      (l) =>
        l.startsWith("vllm:inter_token_latency_seconds_count") ||
        l.startsWith("vllm:generation_tokens_total"),
    )
    .join("\n"),
);
