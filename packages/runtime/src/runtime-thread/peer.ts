// The runtime's end of one thread's link, plus what the runtime knows about that thread: its liveness
// (sentinel heartbeat; none for the main thread, whose death is the process's), the connections it is
// attached to and the connects and utility calls it has in progress.
import { BroadcastChannel } from "node:worker_threads";
import { FrameRingWriter } from "../frame-ring.js";
import {
  type CallName,
  type CallReply,
  type LinkMessage,
  ownedFrame,
  receive,
  type ToHost,
  type ToRuntime,
} from "../messages.js";
import { STALE_AFTER_MS } from "../timing.js";
import type { ConnectionService } from "./connection.js";

export class ThreadPeer {
  readonly key: string;
  readonly linkName: string;
  /** The hello's ring id: a hello on the same channel with another one comes from a new link. */
  readonly ringId: string;
  readonly connections = new Set<ConnectionService>();
  /** Pending connect calls of this thread, by call id. */
  readonly connects = new Map<number, AbortController>();
  /** Pending utility calls of this thread, by call id (cancelled when the caller's signal aborts). */
  readonly utilityCalls = new Map<number, AbortController>();
  private readonly channel: BroadcastChannel;
  /** Forwarded engine steps go here first; the link carries them only when the ring is full. */
  private readonly ring: FrameRingWriter;
  /** Messages posted on the link (wrapping int32): each ring record says how many came before it. */
  private linkPosted = 0;
  private readonly heartbeat: Int32Array | null;
  private lastBeat = 0;
  private lastBeatAt = 0;
  private goneFlag = false;

  constructor(
    key: string,
    linkName: string,
    heartbeat: SharedArrayBuffer | null,
    ring: SharedArrayBuffer,
    ringId: string,
    onMessage: (m: ToRuntime) => void,
  ) {
    this.key = key;
    this.linkName = linkName;
    this.ringId = ringId;
    this.ring = new FrameRingWriter(ring);
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

  /** `frames` may be views of the socket's buffers: the ring copies them, or they are copied for the link. */
  post(message: ToHost): void {
    if (this.goneFlag) return;
    if (message.t === "frames") {
      if (this.ring.tryWrite(message, this.linkPosted)) return;
      // A cloned view would drag its whole pooled backing store along: each frame in its own buffer.
      this.send({ ...message, frames: message.frames.map(ownedFrame) });
      return;
    }
    this.send(message);
  }

  /** The answer to call `K`: generic in the call, so its value must be that call's result (CallMap). */
  reply<K extends CallName>(reply: CallReply<K>): void {
    if (!this.goneFlag) this.send(reply);
  }

  /** Every message on the link says how many ring records came before it (LinkMessage). */
  private send<M extends object>(message: M): void {
    const ordered: M & Pick<LinkMessage, "r"> = { ...message, r: this.ring.records };
    this.channel.postMessage(ordered);
    this.linkPosted = (this.linkPosted + 1) | 0;
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
