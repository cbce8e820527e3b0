// Launcher of the rogue engine: a raw ZeroMQ engine peer in a child process (dist/rogue-engine-main.mjs)
// that does vLLM's engine-side handshake (HELLO, INIT, input registration, READY), answers ADD with valid
// per-step outputs and pushes malformed or unexpected output messages on command. This side never loads
// zeromq; it talks to the child over Node IPC.
import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { FuzzStats, InjectionKind, RogueCommand, RogueReply } from "./rogue-protocol.js";

export const rogueEngineMainPath = fileURLToPath(new URL("../dist/rogue-engine-main.mjs", import.meta.url));

export interface RogueEngine {
  readonly pid: number;
  /** Pushes one injected message; resolves once it was handed to the PUSH socket. */
  inject(
    kind: InjectionKind,
    options?: { requestId?: string; otherRequestId?: string; callId?: number },
  ): Promise<{ frames: number }>;
  /**
   * Pushes random and mutated messages for `seconds` next to the valid step outputs. `decodableOnly`: only
   * those that the client's decoder accepts (weird but well-formed traffic, which must fail nothing).
   */
  fuzz(seconds: number, seed: number, options?: { decodableOnly?: boolean }): Promise<FuzzStats>;
  /** Ids of the requests this engine finished so far. */
  finished(): Promise<string[]>;
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface RogueEngineOptions {
  handshakeAddress: string;
  engineIndex?: number;
  stepMs?: number;
}

/** Starts the child; resolves once it is spawned (it connects to `handshakeAddress` by itself). */
export function startRogueEngine(options: RogueEngineOptions): RogueEngine {
  if (!existsSync(rogueEngineMainPath)) {
    throw new Error(
      `rogue engine not built: ${rogueEngineMainPath} is missing; run the package's build script`,
    );
  }
  const child: ChildProcess = fork(
    rogueEngineMainPath,
    [options.handshakeAddress, String(options.engineIndex ?? 0), String(options.stepMs ?? 5)],
    { serialization: "advanced", execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const pending = new Map<number, { resolve(r: RogueReply): void; reject(e: Error): void }>();
  let nextId = 1;
  child.on("message", (raw) => {
    const message = raw as RogueReply;
    if (message.type === "ready") return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.type === "error") waiter.reject(new Error(`rogue engine: ${message.message}`));
    else waiter.resolve(message);
  });
  void exited.then(() => {
    for (const w of pending.values()) w.reject(new Error("rogue engine exited"));
    pending.clear();
  });
  const request = (command: Omit<RogueCommand, "id">): Promise<RogueReply> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.send({ ...command, id } as RogueCommand);
    });
  };
  return {
    pid: child.pid ?? -1,
    exited,
    async inject(kind, injectOptions = {}) {
      const r = await request({ type: "inject", kind, ...injectOptions } as Omit<RogueCommand, "id">);
      return { frames: (r as { frames: number }).frames };
    },
    async fuzz(seconds, seed, fuzzOptions = {}) {
      const decodableOnly = fuzzOptions.decodableOnly ?? false;
      const r = await request({ type: "fuzz", seconds, seed, decodableOnly } as Omit<RogueCommand, "id">);
      return (r as { stats: FuzzStats }).stats;
    },
    async finished() {
      const r = await request({ type: "finished" } as Omit<RogueCommand, "id">);
      return (r as { requestIds: string[] }).requestIds;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        if (child.connected) child.send({ type: "stop", id: 0 });
        const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
