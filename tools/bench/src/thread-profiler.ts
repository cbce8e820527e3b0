// CPU profiles of this thread and of every worker thread of the process over a chosen interval, through
// the inspector's NodeWorker domain — no hook in the profiled code. (`node --cpu-prof` cannot be used for
// the runtime thread: it lives until process exit, and profiles of workers torn down at exit are lost.)
import { Session } from "node:inspector/promises";
import type { CpuProfile } from "./profile.js";

interface WorkerMessage {
  id?: number;
  result?: { profile?: CpuProfile };
  error?: { message: string };
}

export interface ThreadProfile {
  /** "main" or the inspector's worker title ("[worker 2]"). */
  title: string;
  profile: CpuProfile;
}

export class ThreadProfiler {
  readonly #session = new Session();
  readonly #workers = new Map<string, string>(); // sessionId → title
  readonly #pending = new Map<number, (m: WorkerMessage) => void>();
  #nextId = 1;

  static async start(): Promise<ThreadProfiler> {
    const p = new ThreadProfiler();
    await p.#start();
    return p;
  }

  async #start(): Promise<void> {
    const s = this.#session;
    s.connect();
    s.on("NodeWorker.attachedToWorker", ({ params }) => {
      this.#workers.set(params.sessionId, params.workerInfo.title);
    });
    s.on("NodeWorker.receivedMessageFromWorker", ({ params }) => {
      const message = JSON.parse(params.message) as WorkerMessage;
      if (message.id === undefined) return;
      this.#pending.get(message.id)?.(message);
      this.#pending.delete(message.id);
    });
    await s.post("NodeWorker.enable", { waitForDebuggerOnStart: false });
    // attachedToWorker for the existing workers arrives right after enable.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await s.post("Profiler.enable");
    await s.post("Profiler.start");
    for (const id of this.#workers.keys()) {
      await this.#send(id, "Profiler.enable");
      await this.#send(id, "Profiler.start");
    }
  }

  #send(sessionId: string, method: string): Promise<WorkerMessage> {
    const id = this.#nextId++;
    const reply = new Promise<WorkerMessage>((resolve) => this.#pending.set(id, resolve));
    void this.#session.post("NodeWorker.sendMessageToWorker", {
      sessionId,
      message: JSON.stringify({ id, method }),
    });
    return reply;
  }

  /** Stops every profile started by start() (workers that ended meanwhile are left out). */
  async stop(): Promise<ThreadProfile[]> {
    const out: ThreadProfile[] = [];
    const main = await this.#session.post("Profiler.stop");
    out.push({ title: "main", profile: main.profile as unknown as CpuProfile });
    for (const [id, title] of this.#workers) {
      const reply = await Promise.race([
        this.#send(id, "Profiler.stop"),
        new Promise<WorkerMessage>((resolve) =>
          setTimeout(() => resolve({ error: { message: "timeout" } }), 2000),
        ),
      ]);
      if (reply.result?.profile) out.push({ title, profile: reply.result.profile });
    }
    this.#session.disconnect();
    return out;
  }
}
