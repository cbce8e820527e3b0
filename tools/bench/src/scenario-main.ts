#!/usr/bin/env node
// Runs one scenario in a fresh process (clean heap, threads and sockets) and prints its result as one
// JSON line on stdout. Used by main.ts; also handy alone:
//   node dist/scenario-main.js throughput-product '{"streams":256,"warmupMs":500,"measureMs":3000}'
import { measureFloor, runScenarioFromArgv, type ScenarioRegistry } from "@vllm-engine-core/probe";
import { ceilingThroughput, directLatency } from "./scenarios/direct.js";
import { recordLoad } from "./scenarios/load-engine.js";
import {
  productLatency,
  productMetricsThroughput,
  productOpenStreams,
  productSlowReader,
  productThroughput,
} from "./scenarios/product.js";
import { pythonThroughput } from "./scenarios/python.js";
import { serverBench } from "./scenarios/server.js";
import { vsVllm } from "./scenarios/vs-vllm/index.js";

const SCENARIOS: ScenarioRegistry = {
  "throughput-product": productThroughput,
  "throughput-product-metrics": productMetricsThroughput,
  "throughput-ceiling": ceilingThroughput,
  "throughput-python": pythonThroughput,
  "latency-product": productLatency,
  "latency-direct": directLatency,
  "memory-open-streams": productOpenStreams,
  "memory-slow-reader": productSlowReader,
  floor: measureFloor,
  record: recordLoad,
  server: serverBench,
  "vs-vllm": vsVllm,
};

await runScenarioFromArgv(SCENARIOS);
