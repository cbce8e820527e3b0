#!/usr/bin/env node
// Child-process entry of the mock DP coordinator: the frontend-facing side of vLLM's DPCoordinatorProc
// (vllm/v1/engine/coordinator.py, process_input_socket). It binds the "front publish" XPUB (XPUB_VERBOSE, as
// vllm/utils/network_utils.py make_zmq_socket sets on every XPUB), and
//  - publishes `(counts, current_wave, engines_running)` as msgspec encodes the tuple, counts[i] =
//    [waiting, running, kv_cache_usage] per engine (EngineState.request_counts, initially [0, 0, 0.0]);
//    the counts are the test's (the `publish` command) instead of stats collected from engines;
//  - ignores subscription frames (0x01 / 0x00) but logs them, so a test knows when a frontend listens
//    (an XPUB drops what it publishes before that);
//  - handles a frontend's wake-up `[engine_to_exclude, wave]` as the coordinator does with wave
//    coordination on: when paused, it marks the engines running and publishes `(None, wave, True)`
//    (the START_DP_WAVE broadcast to engines is left out: this coordinator has no engine side).
// It publishes when told to, and on wave-state changes; vLLM's timed republish (every 100 ms while the
// stats change, else every 5 s) is left out, so that a test decides when a frontend's local bumps are reset.
// Commands arrive on the IPC channel from startMockCoordinator; events go to stdout as JSON lines.
import { decodeFrontendWakeup, encodeCoordinatorPublish } from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import type { CoordinatorCommand, MockCoordinatorEvent } from "./coordinator-events.js";

const PARENT_POLL_MS = 250;

function log(event: MockCoordinatorEvent): void {
  try {
    process.stdout.write(`${JSON.stringify({ ...event, ts: Date.now() })}\n`);
  } catch {
    // stdout gone (parent died): nothing to report to
  }
}

async function main(): Promise<void> {
  const address = process.argv[2];
  const engineCount = Number(process.argv[3]);
  if (address === undefined || !Number.isInteger(engineCount) || engineCount < 1) {
    process.stderr.write("usage: coordinator.js <front-publish-address> <engine-count>\n");
    process.exit(2);
  }
  process.stdout.on("error", () => {});

  const publishFront = new zmq.XPublisher({ linger: 0, verbosity: "allSubs" });
  await publishFront.bind(address);

  let counts: [number, number, number][] = Array.from({ length: engineCount }, () => [0, 0, 0]);
  let currentWave = 0;
  let enginesRunning = false;
  // Sends are serialised: a zeromq socket allows one send in flight.
  let sending: Promise<void> = Promise.resolve();
  const publish = (withCounts: boolean) => {
    const message = { counts: withCounts ? counts : null, wave: currentWave, enginesRunning };
    const payload = encodeCoordinatorPublish(message);
    sending = sending.then(() => publishFront.send(payload));
    log({ event: "published", counts: message.counts, wave: currentWave, enginesRunning });
    return sending;
  };

  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    log({ event: "exit", reason });
    publishFront.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("disconnect", () => stop("parent disconnected"));
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) stop("parent died");
  }, PARENT_POLL_MS);

  process.on("message", (raw) => {
    const command = raw as CoordinatorCommand;
    if (command.op === "publish") {
      counts = command.counts.map(([waiting, running, usage]) => [waiting, running, usage ?? 0]);
      if (command.wave !== undefined) currentWave = command.wave;
      if (command.enginesRunning !== undefined) enginesRunning = command.enginesRunning;
      void publish(true);
    }
  });

  log({ event: "started", pid: process.pid, address, engineCount });
  for (;;) {
    let frames: Buffer[];
    try {
      frames = await publishFront.receive();
    } catch (error) {
      if (stopping) return;
      throw error;
    }
    const buffer = frames[0]!;
    if (frames.length === 1 && buffer.length === 1 && (buffer[0] === 0x01 || buffer[0] === 0x00)) {
      log({ event: "subscription", subscribe: buffer[0] === 0x01 });
      continue;
    }
    const wakeup = decodeFrontendWakeup(buffer);
    const engine =
      wakeup.engine instanceof Uint8Array ? Buffer.from(wakeup.engine).toString("hex") : wakeup.engine;
    log({ event: "wakeup", engine, wave: wakeup.wave, paused: !enginesRunning });
    if (!enginesRunning) {
      // "If the wave number is stale, ensure the message is handled by all the engines" — that part only
      // changes the START_DP_WAVE broadcast, which this coordinator does not send.
      enginesRunning = true;
      await publish(false);
    }
  }
}

main().catch((error: unknown) => {
  log({ event: "fault", detail: String((error as Error)?.stack ?? error) });
  process.exit(1);
});
