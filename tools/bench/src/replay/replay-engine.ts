#!/usr/bin/env node
// Bench-only engine that costs (almost) nothing: it performs an engine's startup like vLLM's
// EngineCoreProc (HELLO → INIT → input registration → READY, engine index 0), waits for the ADDs of all
// N streams, then replays recorded mock-engine output messages as fast as the frontend consumes them
// (credit window, see credit.ts). It measures what a frontend can consume when the engine is not the
// bottleneck. Runs as a child process; stops when its parent disconnects.
import { setTimeout as sleep } from "node:timers/promises";
import {
  decodeHandshakeInit,
  encodeHandshakeStatus,
  encodeReadyResponse,
  engineIdentity,
  RequestType,
} from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import { CreditReader } from "./credit.js";
import { readRecording } from "./recording.js";

export interface ReplayConfig {
  handshakeAddress: string;
  recording: string;
  creditFile: string;
  streams: number;
  /** Messages allowed in flight beyond what the consumer has delivered. */
  window: number;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ReplayConfig;
const messages = readRecording(config.recording);
if (messages.length === 0) throw new Error("replay-engine: the recording is empty");
const identity = Buffer.from(engineIdentity(0));
const setIdentity = (s: zmq.Dealer) => {
  // zeromq.js types routingId as a string; the native setter takes the raw 2 identity bytes.
  (s as unknown as { routingId: Buffer }).routingId = identity;
};

const handshake = new zmq.Dealer({ linger: 0 });
setIdentity(handshake);
handshake.connect(config.handshakeAddress);
await handshake.send(encodeHandshakeStatus({ status: "HELLO", local: false, headless: true }));
const [initFrame] = await handshake.receive();
const init = decodeHandshakeInit(initFrame!);

const input = new zmq.Dealer({ linger: 0 });
setIdentity(input);
input.connect(init.addresses.inputs[0]!);
await input.send(
  encodeReadyResponse({
    maxModelLen: 1 << 24,
    numGpuBlocks: 8192,
    blockSize: 16,
    dpStatsAddress: null,
    dtype: "bfloat16",
    vllmVersion: "0.26.0.dev0+replay",
    worldSize: 1,
    dataParallelSize: 1,
    tensorParallelSize: 1,
    pipelineParallelSize: 1,
    decodeContextParallelSize: 1,
    dataParallelRank: 0,
    maxNumSeqs: 1 << 16,
    maxNumBatchedTokens: 8192,
    instanceId: `replay-${process.pid}`,
    kvCacheSizeTokens: null,
    kvCacheMaxConcurrency: null,
    kvEventsConfig: null,
  }),
);
const output = new zmq.Push({ linger: 0 });
output.connect(init.addresses.outputs[0]!);
await handshake.send(encodeHandshakeStatus({ status: "READY", local: false, headless: true }));
handshake.close();

let stopping = false;
process.once("disconnect", () => {
  stopping = true;
});

// Replay starts once every stream's ADD arrived (outputs for unknown ids would be dropped).
let adds = 0;
let allAdded: () => void = () => undefined;
const ready = new Promise<void>((resolve) => {
  allAdded = resolve;
});
void (async () => {
  for (;;) {
    let frames: Buffer[];
    try {
      frames = await input.receive();
    } catch {
      return;
    }
    if (frames[0]?.[0] === RequestType.ADD && ++adds === config.streams) allAdded();
  }
})();
await ready;

const credit = new CreditReader(config.creditFile);
let sent = 0;
while (!stopping) {
  // Tokens the consumer has not delivered yet, in messages (each carries one token per stream).
  while (!stopping && sent - credit.delivered() / config.streams >= config.window) await sleep(1);
  if (stopping) break;
  await output.send(messages[sent % messages.length]!);
  sent++;
}
credit.close();
input.close();
output.close();
