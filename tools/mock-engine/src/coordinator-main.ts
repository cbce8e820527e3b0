#!/usr/bin/env node
// Child-process entry of the mock DP coordinator: vLLM's DPCoordinatorProc (vllm/v1/engine/coordinator.py,
// process_input_socket). Every XPUB is XPUB_VERBOSE, as vllm/utils/network_utils.py make_zmq_socket sets.
//
// Front side (always): the "front publish" XPUB the frontends' XSUBs connect to.
//  - publishes `(counts, current_wave, engines_running)` as msgspec encodes the tuple, counts[i] =
//    [waiting, running, kv_cache_usage] per engine (EngineState.request_counts, initially [0, 0, 0.0]);
//  - ignores subscription frames (0x01 / 0x00) but logs them, so a test knows when a frontend listens
//    (an XPUB drops what it publishes before that);
//  - a frontend's wake-up `[engine_to_exclude, wave]` while paused: engines running, START_DP_WAVE to the
//    engines (engine side only; exclude nil when the wave is stale), then `(None, wave, True)`.
// Engine side (with --back-publish / --back-output): the "back publish" XPUB and "back output" PULL.
//  - startup gate: one 0x01 per engine, then READY (and READY again to a late subscriber);
//  - the counts come from the engines' EngineCoreOutputs(scheduler_stats=...) on the PULL, and are published
//    every --stats-interval-ms (vLLM: 100) while they change, else every 5 s; the front side is served only
//    after the gate, as in vLLM.
// Without an engine side the counts are the test's (`publish` command on the IPC channel), published when
// told (and on wave-state changes): no timed republish, so a test decides when a frontend's local bumps end.
// Wave messages from engines (wave_complete / start_wave) are only logged: the mock engines have no waves.
import { parseArgs } from "node:util";
import {
  decodeFrontendWakeup,
  decodeOutputMessage,
  encodeCoordinatorPublish,
  encodeStartDpWave,
} from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import type { CoordinatorCommand, MockCoordinatorEvent } from "./coordinator-events.js";

const PARENT_POLL_MS = 250;
/** "Send at stats_update_interval_ms interval if the stats have changed, or otherwise every 5 seconds." */
const UNCHANGED_REPUBLISH_MS = 5_000;

function log(event: MockCoordinatorEvent): void {
  try {
    process.stdout.write(`${JSON.stringify({ ...event, ts: Date.now() })}\n`);
  } catch {
    // stdout gone (parent died): nothing to report to
  }
}

interface Args {
  front: string;
  engineCount: number;
  backPublish: string | undefined;
  backOutput: string | undefined;
  statsIntervalMs: number;
}

function parse(): Args {
  const { values } = parseArgs({
    options: {
      front: { type: "string" },
      engines: { type: "string" },
      "back-publish": { type: "string" },
      "back-output": { type: "string" },
      "stats-interval-ms": { type: "string" },
    },
    strict: true,
  });
  const engineCount = Number(values.engines);
  const statsIntervalMs = Number(values["stats-interval-ms"] ?? 100);
  if (
    values.front === undefined ||
    !Number.isInteger(engineCount) ||
    engineCount < 1 ||
    (values["back-publish"] === undefined) !== (values["back-output"] === undefined) ||
    !Number.isInteger(statsIntervalMs) ||
    statsIntervalMs < 1
  ) {
    process.stderr.write(
      "usage: coordinator.js --front <addr> --engines <n> [--back-publish <addr> --back-output <addr>] [--stats-interval-ms <ms>]\n",
    );
    process.exit(2);
  }
  return {
    front: values.front,
    engineCount,
    backPublish: values["back-publish"],
    backOutput: values["back-output"],
    statsIntervalMs,
  };
}

/** One send in flight per zeromq socket. */
function serialSender(socket: zmq.Writable): (frames: Uint8Array | Uint8Array[]) => Promise<void> {
  let last: Promise<void> = Promise.resolve();
  return (frames) => {
    last = last.then(() => socket.send(frames));
    return last;
  };
}

async function main(): Promise<void> {
  const args = parse();
  process.stdout.on("error", () => {});
  const sockets: zmq.Socket[] = [];
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    log({ event: "exit", reason });
    for (const socket of sockets) socket.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("disconnect", () => stop("parent disconnected"));
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) stop("parent died");
  }, PARENT_POLL_MS);

  const publishFront = new zmq.XPublisher({ linger: 0, verbosity: "allSubs" });
  sockets.push(publishFront);
  await publishFront.bind(args.front);
  const sendFront = serialSender(publishFront);

  let counts: [number, number, number][] = Array.from({ length: args.engineCount }, () => [0, 0, 0]);
  let currentWave = 0;
  let enginesRunning = false;
  let statsChanged = false;
  let lastPublish = 0;
  const publish = (withCounts: boolean) => {
    const message = { counts: withCounts ? counts : null, wave: currentWave, enginesRunning };
    log({ event: "published", counts: message.counts, wave: currentWave, enginesRunning });
    if (withCounts) lastPublish = Date.now();
    return sendFront(encodeCoordinatorPublish(message));
  };

  let sendBack: ((frames: Uint8Array | Uint8Array[]) => Promise<void>) | undefined;
  if (args.backPublish !== undefined && args.backOutput !== undefined) {
    const publishBack = new zmq.XPublisher({ linger: 0, verbosity: "allSubs" });
    const outputBack = new zmq.Pull({ linger: 0, receiveHighWaterMark: 0 });
    sockets.push(publishBack, outputBack);
    await publishBack.bind(args.backPublish);
    await outputBack.bind(args.backOutput);
    sendBack = serialSender(publishBack);
    log({ event: "started", pid: process.pid, address: args.front, engineCount: args.engineCount });
    // "Wait until all engines subscribe."
    for (let i = 0; i < args.engineCount; i++) {
      const [frame] = await publishBack.receive();
      if (frame?.length !== 1 || frame[0] !== 0x01) {
        throw new Error("DP Coordinator received unexpected message while waiting for engines to subscribe");
      }
    }
    await sendBack(new TextEncoder().encode("READY"));
    log({ event: "engines-ready", engineCount: args.engineCount });
    void (async () => {
      for await (const [frame] of publishBack) {
        if (frame?.length === 1 && frame[0] === 0x01) await sendBack!(new TextEncoder().encode("READY"));
      }
    })().catch(() => {});
    void (async () => {
      for await (const frames of outputBack) {
        const message = decodeOutputMessage(frames);
        if (message.kind === "dead") continue;
        const out = message.outputs;
        const stats = out.schedulerStats;
        if (stats !== null && out.engineIndex < counts.length) {
          counts[out.engineIndex] = [stats.numWaitingReqs, stats.numRunningReqs, stats.kvCacheUsage];
          statsChanged = true;
          log({ event: "engine-counts", engineIndex: out.engineIndex, counts: counts[out.engineIndex]! });
        }
        if (out.waveComplete != null || out.startWave != null) {
          log({ event: "fault", detail: `wave message from engine ${out.engineIndex} (not modelled)` });
        }
      }
    })().catch((error: unknown) => {
      if (!stopping) log({ event: "fault", detail: String(error) });
    });
    setInterval(() => {
      const due = statsChanged ? args.statsIntervalMs : UNCHANGED_REPUBLISH_MS;
      if (Date.now() - lastPublish < due) return;
      statsChanged = false;
      void publish(true);
    }, 5);
  } else {
    log({ event: "started", pid: process.pid, address: args.front, engineCount: args.engineCount });
    process.on("message", (raw) => {
      const command = raw as CoordinatorCommand;
      if (command.op !== "publish") return;
      counts = command.counts.map(([waiting, running, usage]) => [waiting, running, usage ?? 0]);
      if (command.wave !== undefined) currentWave = command.wave;
      if (command.enginesRunning !== undefined) enginesRunning = command.enginesRunning;
      void publish(true);
    });
  }

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
      // "If the wave number is stale, ensure the message is handled by all the engines." A Python frontend's
      // identity bytes never equal an engine index: no engine is excluded then either.
      const exclude = wakeup.wave < currentWave || typeof engine !== "number" ? null : engine;
      enginesRunning = true;
      await sendBack?.(encodeStartDpWave({ wave: currentWave, excludeEngineIndex: exclude }));
      await publish(false);
    }
  }
}

main().catch((error: unknown) => {
  log({ event: "fault", detail: String((error as Error)?.stack ?? error) });
  process.exit(1);
});
