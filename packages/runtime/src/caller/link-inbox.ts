// What this thread receives from one runtime, in the order the runtime sent it, from two channels: the
// link (a BroadcastChannel: replies, control messages, and frames the ring had no room for) and the frame
// ring (forwarded engine steps, frame-ring.ts). A link message names how many ring records came before it
// (`r`); a ring record how many link messages came before it. Each channel is FIFO, so delivering a record
// only once the link messages before it were handled, and a link message only after the records before it,
// restores the runtime's order exactly.
import { FrameRingReader, type RingFrames } from "../frame-ring.js";

/** `a - b` on the rings' wrapping int32 counters. */
const ahead = (a: number, b: number): number => (a - b) | 0;

export class LinkInbox {
  readonly #reader: FrameRingReader;
  readonly #onFrames: (frames: RingFrames) => void;
  /** Link messages handled (wrapping int32, as the runtime counts them). */
  #linkSeen = 0;
  #closed = false;

  constructor(ring: SharedArrayBuffer, onFrames: (frames: RingFrames) => void) {
    this.#reader = new FrameRingReader(ring);
    this.#onFrames = onFrames;
    void this.#watch();
  }

  /** A link message: first the `r` records written before it, then it. */
  onLinkMessage(r: number, handle: () => void): void {
    this.#drain(r);
    this.#linkSeen = (this.#linkSeen + 1) | 0;
    try {
      handle();
    } finally {
      if (!this.#closed) this.#drain(undefined); // records that waited for this message
    }
  }

  close(): void {
    this.#closed = true;
    this.#reader.wake();
  }

  /** Delivers records in order, up to `until` records consumed (all there are when undefined). */
  #drain(until: number | undefined): void {
    const reader = this.#reader;
    while (!this.#closed && (until === undefined || ahead(until, reader.records) > 0)) {
      const linkBefore = reader.peekLinkBefore();
      // Empty, or the next record comes after link messages not handled yet (they will drain it).
      if (linkBefore === undefined || ahead(linkBefore, this.#linkSeen) > 0) return;
      const frames = reader.read()!;
      try {
        this.#onFrames(frames);
      } catch (error) {
        // As an exception in a message handler would: reported, and the next record still delivered.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** Wakes on every record the runtime writes (Atomics.waitAsync keeps no thread alive by itself). */
  async #watch(): Promise<void> {
    const reader = this.#reader;
    while (!this.#closed) {
      const seen = reader.writtenRecords();
      this.#drain(undefined);
      if (this.#closed) return;
      const wait = reader.waitForRecords(seen);
      if (wait !== undefined) await wait;
    }
  }
}
