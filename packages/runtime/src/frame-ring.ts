// A single-producer, single-consumer ring in a SharedArrayBuffer that carries forwarded engine-step frames
// from the runtime thread to one owner thread, beside that thread's BroadcastChannel link. Why: an idle
// thread woken by Atomics.notify → Atomics.waitAsync gets the message 60–140 µs sooner than through a
// BroadcastChannel on this project's 2-vCPU VM, and neither side pays a structured clone (README, "Links";
// bench/wake.bench.mjs). The thread creates the buffer and sends it in its hello (a BroadcastChannel carries
// SharedArrayBuffers, not MessagePorts).
//
// Ordering with the link: the two channels are merged back into the order the runtime sent in. Each ring
// record carries how many link messages the runtime had posted before it (`linkBefore`); each link message
// carries how many ring records were written before it (`r`, see LinkInbox). A record that does not fit
// (ring full: the owner is not reading) goes over the link instead, ordered the same way.
//
// Layout: 16 bytes of Int32 control words, then the data region. Records start 8-byte aligned:
//   [total bytes][linkBefore][seq: float64][senders n][slots n][frames n][connection id bytes]
//   senders (i32 × n), slots (i32 × n), frame lengths (u32 × n), connection id (UTF-8), frames, padding.
// A record never wraps: at the end of the data region a zero `total` says "continue at offset 0".
// The byte counters wrap at 2^32 (int32 arithmetic); only their differences and low bits are used.

import type { ToHost } from "./messages.js";

/** Control word indices (Int32). */
const WRITTEN_BYTES = 0;
const READ_BYTES = 1;
/** Records written: what the reader waits on. */
const WRITTEN_RECORDS = 2;
const CONTROL_BYTES = 16;
const HEADER_INTS = 8;
/** 1 MiB: about 32 engine steps of 1,024 outputs. */
export const DEFAULT_RING_BYTES = 1 << 20;

/** The ring's buffer (created by the owner thread; `dataBytes` a power of two, ≥ 1 KiB). */
export function createFrameRing(dataBytes = DEFAULT_RING_BYTES): SharedArrayBuffer {
  if (dataBytes < 1024 || (dataBytes & (dataBytes - 1)) !== 0) {
    throw new RangeError("ring size: a power of two ≥ 1024");
  }
  return new SharedArrayBuffer(CONTROL_BYTES + dataBytes);
}

/** One forwarded engine step: the ToHost "frames" message without its tag. */
export type RingFrames = Omit<Extract<ToHost, { t: "frames" }>, "t">;

// Atomics.waitAsync (V8 8.7+, every supported Node) is newer than the ES2022 lib the packages compile against.
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
const waitAsync: WaitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The views both ends read the ring through. */
abstract class RingViews {
  protected readonly control: Int32Array;
  protected readonly bytes: Uint8Array;
  protected readonly ints: Int32Array;
  protected readonly doubles: Float64Array;
  protected readonly mask: number;
  protected readonly size: number;

  constructor(ring: SharedArrayBuffer) {
    const size = ring.byteLength - CONTROL_BYTES;
    this.control = new Int32Array(ring, 0, CONTROL_BYTES / 4);
    this.bytes = new Uint8Array(ring, CONTROL_BYTES, size);
    this.ints = new Int32Array(ring, CONTROL_BYTES, size / 4);
    this.doubles = new Float64Array(ring, CONTROL_BYTES, size / 8);
    this.mask = size - 1;
    this.size = size;
  }
}

/** The runtime thread's end. */
export class FrameRingWriter extends RingViews {
  /** Records written (this end's copy of WRITTEN_RECORDS): what a link message says came before it. */
  records: number;

  constructor(ring: SharedArrayBuffer) {
    super(ring);
    this.records = Atomics.load(this.control, WRITTEN_RECORDS);
  }

  /**
   * Writes one step and wakes the reader; false when it does not fit now (the reader is behind, or the
   * record is larger than half the ring): the caller sends it over the link instead.
   */
  tryWrite(message: RingFrames, linkBefore: number): boolean {
    const { senders, slots, frames } = message;
    const id = utf8Encoder.encode(message.c);
    let payload = id.length;
    for (const frame of frames) payload += frame.length;
    const ints = HEADER_INTS + senders.length + slots.length + frames.length;
    const total = (4 * ints + payload + 7) & ~7;
    if (total > this.size / 2) return false;
    const written = Atomics.load(this.control, WRITTEN_BYTES);
    const used = (written - Atomics.load(this.control, READ_BYTES)) | 0;
    let at = written & this.mask;
    let skip = 0;
    if (at + total > this.size) {
      skip = this.size - at; // the tail is left unused: records never wrap
    }
    if (used + skip + total > this.size) return false;
    if (skip > 0) {
      this.ints[at >> 2] = 0;
      at = 0;
    }
    const ints32 = this.ints;
    let i = at >> 2;
    ints32[i++] = total;
    ints32[i++] = linkBefore;
    this.doubles[i >> 1] = message.seq;
    i += 2;
    ints32[i++] = senders.length;
    ints32[i++] = slots.length;
    ints32[i++] = frames.length;
    ints32[i++] = id.length;
    for (const sender of senders) ints32[i++] = sender;
    ints32.set(slots, i);
    i += slots.length;
    for (const frame of frames) ints32[i++] = frame.length;
    let b = i << 2;
    this.bytes.set(id, b);
    b += id.length;
    for (const frame of frames) {
      this.bytes.set(frame, b);
      b += frame.length;
    }
    Atomics.store(this.control, WRITTEN_BYTES, (written + skip + total) | 0);
    this.records = (this.records + 1) | 0;
    Atomics.store(this.control, WRITTEN_RECORDS, this.records);
    Atomics.notify(this.control, WRITTEN_RECORDS);
    return true;
  }
}

/** The owner thread's end. */
export class FrameRingReader extends RingViews {
  #read: number;
  /** Records consumed. */
  records: number;

  constructor(ring: SharedArrayBuffer) {
    super(ring);
    // Made by the owner thread before the runtime knows the ring: nothing written yet.
    this.#read = Atomics.load(this.control, READ_BYTES);
    this.records = Atomics.load(this.control, WRITTEN_RECORDS);
  }

  /** Records written and not yet consumed. */
  pending(): number {
    return (Atomics.load(this.control, WRITTEN_RECORDS) - this.records) | 0;
  }

  /** The next record's `linkBefore`, or undefined when the ring is empty. */
  peekLinkBefore(): number | undefined {
    if (this.pending() === 0) return undefined;
    return this.ints[(this.#recordStart() >> 2) + 1];
  }

  /** Consumes the next record (copied out: the ring space is reused at once), or undefined when empty. */
  read(): RingFrames | undefined {
    if (this.pending() === 0) return undefined;
    const at = this.#recordStart();
    const ints = this.ints;
    let i = at >> 2;
    const total = ints[i]!;
    const seq = this.doubles[(i + 2) >> 1]!;
    const sendersN = ints[i + 4]!;
    const slotsN = ints[i + 5]!;
    const framesN = ints[i + 6]!;
    const idN = ints[i + 7]!;
    i += HEADER_INTS;
    const senders: number[] = new Array(sendersN);
    for (let k = 0; k < sendersN; k++) senders[k] = ints[i++]!;
    const slots = ints.slice(i, i + slotsN);
    i += slotsN;
    const lengths = ints.subarray(i, i + framesN);
    let b = (i + framesN) << 2;
    const c = utf8Decoder.decode(this.bytes.slice(b, b + idN));
    b += idN;
    const frames: Uint8Array[] = new Array(framesN);
    for (let k = 0; k < framesN; k++) {
      const n = lengths[k]!;
      frames[k] = this.bytes.slice(b, b + n); // an ordinary ArrayBuffer: decoded values may keep views of it
      b += n;
    }
    this.#read = (this.#read + total) | 0; // #recordStart already stepped over a wrap marker
    Atomics.store(this.control, READ_BYTES, this.#read);
    this.records = (this.records + 1) | 0;
    return { c, seq, senders, frames, slots };
  }

  /** Resolves once a record is written after `seen` (WRITTEN_RECORDS), or at once if one already was. */
  waitForRecords(seen: number): Promise<unknown> | undefined {
    const wait = waitAsync(this.control, WRITTEN_RECORDS, seen);
    return wait.async ? wait.value : undefined;
  }

  /** WRITTEN_RECORDS now (what waitForRecords compares with). */
  writtenRecords(): number {
    return Atomics.load(this.control, WRITTEN_RECORDS);
  }

  /** Wakes a pending waitForRecords (the owner closes its link). */
  wake(): void {
    Atomics.notify(this.control, WRITTEN_RECORDS);
  }

  /** Offset of the next record (steps #read over a wrap marker: the rest of the region, then offset 0). */
  #recordStart(): number {
    let at = this.#read & this.mask;
    if (this.ints[at >> 2] === 0) {
      this.#read = (this.#read + this.size - at) | 0;
      at = 0;
    }
    return at;
  }
}
