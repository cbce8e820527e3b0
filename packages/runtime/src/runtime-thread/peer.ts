// The runtime's end of one thread's link, plus what the runtime knows about that thread: its liveness
// (sentinel heartbeat; none for the main thread, whose death is the process's), the connections it is
// attached to and the connects and utility calls it has in progress.
import { BroadcastChannel } from "node:worker_threads";
import { type CallName, type CallReply, receive, type ToHost, type ToRuntime } from "../messages.js";
import { STALE_AFTER_MS } from "../timing.js";
import type { ConnectionService } from "./connection.js";

export class ThreadPeer {
  readonly key: string;
  readonly linkName: string;
  readonly connections = new Set<ConnectionService>();
  /** Pending connect calls of this thread, by call id. */
  readonly connects = new Map<number, AbortController>();
  /** Pending utility calls of this thread, by call id (cancelled when the caller's signal aborts). */
  readonly utilityCalls = new Map<number, AbortController>();
  private readonly channel: BroadcastChannel;
  private readonly heartbeat: Int32Array | null;
  private lastBeat = 0;
  private lastBeatAt = 0;
  private goneFlag = false;

  constructor(
    key: string,
    linkName: string,
    heartbeat: SharedArrayBuffer | null,
    onMessage: (m: ToRuntime) => void,
  ) {
    this.key = key;
    this.linkName = linkName;
    this.heartbeat = heartbeat === null ? null : new Int32Array(heartbeat);
    if (this.heartbeat !== null) {
      this.lastBeat = Atomics.load(this.heartbeat, 0);
      this.lastBeatAt = performance.now();
    }
    this.channel = new BroadcastChannel(linkName);
    receive<ToRuntime>(this.channel, onMessage);
    // The runtime's own keep-alive decides its lifetime, not its links.
    this.channel.unref();
  }

  get gone(): boolean {
    return this.goneFlag;
  }

  post(message: ToHost): void {
    if (!this.goneFlag) this.channel.postMessage(message);
  }

  /** The answer to call `K`: generic in the call, so its value must be that call's result (CallMap). */
  reply<K extends CallName>(reply: CallReply<K>): void {
    if (!this.goneFlag) this.channel.postMessage(reply);
  }

  /**
   * True once the sentinel's counter has not moved for STALE_AFTER_MS of this thread's time. Comparing
   * counters (not clocks) keeps a busy runtime from mistaking its own stall for the peer's death.
   */
  isStale(now: number): boolean {
    if (this.heartbeat === null || this.goneFlag) return false;
    const beat = Atomics.load(this.heartbeat, 0);
    if (beat !== this.lastBeat) {
      this.lastBeat = beat;
      this.lastBeatAt = now;
      return false;
    }
    return now - this.lastBeatAt > STALE_AFTER_MS;
  }

  close(): void {
    if (this.goneFlag) return;
    this.goneFlag = true;
    this.channel.close();
  }
}
