// The engine side of a scenario: the mock engine (real engine behaviour, costs a core at full load) or
// the replay engine (recorded mock output replayed under credit-based flow control; nearly free).
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DirectFrontend,
  freeTcpPort,
  startProbeEngine,
  streamRequestIds,
  wireRequest,
} from "@vllm-engine-core/probe";
import { decodeOutputMessage } from "@vllm-engine-core/protocol";
import { writeRecording } from "../replay/recording.js";

export type EngineSpec =
  | { kind: "mock"; stepMs: number }
  | { kind: "replay"; recording: string; streams: number };

export interface ThroughputOptions {
  streams: number;
  warmupMs: number;
  measureMs: number;
  /** Replay recording; without it the mock engine runs at full load (step 0 ms). */
  recording?: string;
  /** Profile the working threads over the window and write the profiles here. */
  profileDir?: string;
}

export function engineSpecFor(o: ThroughputOptions): EngineSpec {
  return o.recording
    ? { kind: "replay", recording: o.recording, streams: o.streams }
    : { kind: "mock", stepMs: 0 };
}

export interface LoadEngine {
  pid: number;
  handshakeAddress: string;
  /** Replay only: the file consumers publish their delivered token count in. */
  creditFile: string | undefined;
  stop(): Promise<void>;
}

/** Messages the replay engine may have in flight beyond the consumer's delivered count. */
const REPLAY_WINDOW = 48;

/** Ids of the streams a replay recording carries (the frontend under test must submit exactly these). */
export function loadStreamIds(streams: number): string[] {
  return streamRequestIds("load", streams);
}

export async function startLoadEngine(spec: EngineSpec): Promise<LoadEngine> {
  const port = await freeTcpPort();
  const handshakeAddress = `tcp://127.0.0.1:${port}`;
  if (spec.kind === "mock") {
    const engine = await startProbeEngine({ handshakeAddress, stepMs: spec.stepMs });
    return { pid: engine.pid, handshakeAddress, creditFile: undefined, stop: () => engine.stop() };
  }
  const creditFile = join(tmpdir(), `vllm-engine-core-bench-credit-${randomUUID()}`);
  writeFileSync(creditFile, Buffer.alloc(8));
  const config = {
    handshakeAddress,
    recording: spec.recording,
    creditFile,
    streams: spec.streams,
    window: REPLAY_WINDOW,
  };
  const child = fork(new URL("../replay/replay-engine.js", import.meta.url), [JSON.stringify(config)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    pid: child.pid ?? -1,
    handshakeAddress,
    creditFile,
    async stop() {
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(creditFile, { force: true });
    },
  };
}

/**
 * Records `messages` consecutive output messages of the mock engine at full load (step 0 ms) in which
 * each of the `streams` load streams has exactly one plain output.
 */
export async function recordLoad(o: {
  streams: number;
  messages: number;
  out: string;
}): Promise<{ out: string; messages: number; bytes: number }> {
  const engine = await startLoadEngine({ kind: "mock", stepMs: 0 });
  const frontend = await DirectFrontend.connect({ handshakeAddress: engine.handshakeAddress });
  try {
    const recorded: Buffer[][] = [];
    let done: () => void = () => undefined;
    const full = new Promise<void>((resolve) => {
      done = resolve;
    });
    frontend.startRawOutputLoop((frames) => {
      if (recorded.length >= o.messages) return;
      const m = decodeOutputMessage(frames);
      if (m.kind !== "outputs" || m.outputs.outputs.length !== o.streams) return;
      if (m.outputs.outputs.some((x) => x.finishReason != null)) return;
      recorded.push(frames.map((f) => Buffer.from(f)));
      if (recorded.length === o.messages) done();
    });
    const ids = loadStreamIds(o.streams);
    for (const id of ids) await frontend.submit(wireRequest(id, 100_000_000));
    await full;
    await frontend.abort(ids);
    writeRecording(o.out, recorded);
    return {
      out: o.out,
      messages: recorded.length,
      bytes: recorded.reduce((n, fs) => n + fs.reduce((k, f) => k + f.length, 0), 0),
    };
  } finally {
    await frontend.close();
    await engine.stop();
  }
}
