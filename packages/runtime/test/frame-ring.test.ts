// The frame ring (SharedArrayBuffer, runtime thread → owner thread) and its merge with the link
// (LinkInbox): records round-trip byte-exact from Buffer views, wrap around a small ring, refuse what does not
// fit, survive the counters' int32 wrap, and — with a real worker thread writing the way the runtime's peer
// does — come out merged with the BroadcastChannel's messages in exactly the order they were sent.
import { BroadcastChannel, Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { LinkInbox } from "../src/caller/link-inbox.js";
import { createFrameRing, FrameRingReader, FrameRingWriter, type RingFrames } from "../src/frame-ring.js";

/** A record whose frames are views into larger Buffers at odd offsets (what zeromq.js hands out). */
function record(i: number, sizes: readonly number[]): RingFrames {
  const frames = sizes.map((size, k) => {
    const backing = Buffer.alloc(size + 11);
    const frame = backing.subarray(3 + k, 3 + k + size);
    for (let b = 0; b < size; b++) frame[b] = (i * 31 + b * 7 + k) & 0xff;
    return frame;
  });
  return {
    c: `conn-${i % 3}-ü`,
    seq: i * 1_000_003,
    senders: [i % 2, 5],
    frames,
    slots: Int32Array.of(i, -1, 7),
  };
}

function expectSame(got: RingFrames | undefined, sent: RingFrames): void {
  expect(got).toBeDefined();
  expect(got!.c).toBe(sent.c);
  expect(got!.seq).toBe(sent.seq);
  expect(got!.senders).toEqual(sent.senders);
  expect([...got!.slots]).toEqual([...sent.slots]);
  expect(got!.frames.map((f) => Buffer.from(f).toString("hex"))).toEqual(
    sent.frames.map((f) => Buffer.from(f).toString("hex")),
  );
  // Copied out into ordinary buffers: decoded values may keep views of them while the ring is reused.
  for (const frame of got!.frames) expect(frame.buffer).toBeInstanceOf(ArrayBuffer);
  expect(got!.slots.buffer).toBeInstanceOf(ArrayBuffer);
}

describe("frame ring", () => {
  it("round-trips records (several frames, empty ones, non-ASCII connection ids) and reports their link order", () => {
    const ring = createFrameRing();
    const writer = new FrameRingWriter(ring);
    const reader = new FrameRingReader(ring);
    expect(reader.read()).toBeUndefined();
    const sent = [record(1, [300, 40]), record(2, [0]), record(3, []), record(4, [5000, 1, 2])];
    for (const [i, r] of sent.entries()) expect(writer.tryWrite(r, i * 2)).toBe(true);
    expect(reader.pending()).toBe(4);
    sent.forEach((r, i) => {
      expect(reader.peekLinkBefore()).toBe(i * 2);
      expectSame(reader.read(), r);
    });
    expect(reader.read()).toBeUndefined();
    expect(reader.peekLinkBefore()).toBeUndefined();
  });

  it("wraps around a small ring many times, refuses what does not fit, and accepts it again once read", () => {
    const ring = createFrameRing(1024);
    const writer = new FrameRingWriter(ring);
    const reader = new FrameRingReader(ring);
    expect(writer.tryWrite(record(0, [600]), 0)).toBe(false); // larger than half the ring: the link's
    let written = 0;
    let read = 0;
    const queue: RingFrames[] = [];
    for (let step = 0; step < 5_000; step++) {
      const r = record(step, [(step * 37) % 200, step % 3]);
      if (writer.tryWrite(r, 0)) {
        queue.push(r);
        written++;
      } else {
        // Full: only reading makes room.
        expect(queue.length).toBeGreaterThan(0);
        expectSame(reader.read(), queue.shift()!);
        read++;
      }
      if (step % 7 === 0 && queue.length > 0) {
        expectSame(reader.read(), queue.shift()!);
        read++;
      }
    }
    while (queue.length > 0) {
      expectSame(reader.read(), queue.shift()!);
      read++;
    }
    expect(reader.read()).toBeUndefined();
    expect(read).toBe(written);
    expect(written).toBeGreaterThan(1_000); // ~150 B records in 1 KiB: the ring went round many times
  });

  it("keeps working when its byte and record counters pass 2^31 and 2^32", () => {
    for (const start of [0x7fff_ff00, -0x100]) {
      const ring = createFrameRing(1024);
      const control = new Int32Array(ring, 0, 4);
      control[0] = start; // bytes written
      control[1] = start; // bytes read
      control[2] = start; // records written
      const writer = new FrameRingWriter(ring);
      const reader = new FrameRingReader(ring);
      for (let i = 0; i < 400; i++) {
        const r = record(i, [100 + (i % 50)]);
        expect(writer.tryWrite(r, i)).toBe(true);
        expect(reader.peekLinkBefore()).toBe(i);
        expectSame(reader.read(), r);
      }
      expect(reader.records).toBe((start + 400) | 0);
    }
  });
});

describe("LinkInbox: each rule of the merge, one thread, in a fixed order", () => {
  it("a link message comes after the records written before it; a record waits for the link messages before it", async () => {
    const ring = createFrameRing();
    const writer = new FrameRingWriter(ring);
    const order: string[] = [];
    const inbox = new LinkInbox(ring, (frames) => order.push(`ring ${frames.seq / 1_000_003}`));
    try {
      let linkPosted = 0;
      const link = (name: string) => {
        const r = writer.records;
        linkPosted++;
        return () => inbox.onLinkMessage(r, () => order.push(`link ${name}`));
      };
      // Record 1, then link message A: A's handler must not run before record 1 is delivered, even though
      // the inbox's own wake-up (a later task) has not run yet.
      expect(writer.tryWrite(record(1, [10]), linkPosted)).toBe(true);
      const a = link("A");
      a();
      expect(order).toEqual(["ring 1", "link A"]);
      // Link message B is sent (over the link, still in flight), then record 2: record 2 must wait for B even
      // when the inbox wakes up for it first.
      const b = link("B");
      expect(writer.tryWrite(record(2, [10]), linkPosted)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20)); // the inbox wakes, sees record 2, holds it
      expect(order).toEqual(["ring 1", "link A"]);
      b();
      expect(order).toEqual(["ring 1", "link A", "link B", "ring 2"]);
      // Nothing held back: a record alone is delivered by the wake-up.
      expect(writer.tryWrite(record(3, [10]), linkPosted)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(order.at(-1)).toBe("ring 3");
    } finally {
      inbox.close();
    }
  });
});

describe("LinkInbox: the ring and the link merged in the runtime's order (a real worker thread writes)", () => {
  const run = async (kinds: ("ring" | "link")[], ringBytes: number, pauseEvery: number) => {
    const ring = createFrameRing(ringBytes);
    const name = `frame-ring-test-${process.pid}-${Math.random()}`;
    const channel = new BroadcastChannel(name);
    const order: number[] = [];
    const problems: string[] = [];
    const inbox = new LinkInbox(ring, (frames) => {
      const n = frames.seq;
      const frame = Buffer.from(frames.frames[0]!);
      if (frame.readUInt32LE(0) !== n || frame.length !== 8 + (n % 97) || frames.slots[0] !== n) {
        problems.push(`record ${n} arrived damaged`);
      }
      order.push(n);
    });
    const done = new Promise<{ viaLinkBecauseFull: number }>((resolve) => {
      channel.onmessage = (event) => {
        const m = (event as MessageEvent).data;
        inbox.onLinkMessage(m.r, () => {
          if (m.t === "done") resolve(m);
          else order.push(m.t === "note" ? m.n : m.seq);
        });
      };
    });
    const worker = new Worker(new URL("./fixtures/ring-sender.mjs", import.meta.url), {
      workerData: { ring, name, kinds, pauseEvery },
    });
    try {
      const result = await done;
      expect(problems).toEqual([]);
      expect(order).toEqual(kinds.map((_, i) => i));
      return result;
    } finally {
      inbox.close();
      channel.close();
      await worker.terminate();
    }
  };

  it("a random mix, a 4 KiB ring the reader cannot keep up with: records that did not fit went over the link, in order", async () => {
    const kinds = Array.from({ length: 3_000 }, (_, i): "link" | "ring" =>
      (i * 7919) % 5 < 2 ? "link" : "ring",
    );
    const { viaLinkBecauseFull } = await run(kinds, 4096, 0);
    expect(viaLinkBecauseFull).toBeGreaterThan(0);
  });

  it("records only, the reader idle between them (woken by Atomics.waitAsync), every one through the ring", async () => {
    const kinds = Array.from({ length: 300 }, (): "ring" => "ring");
    const { viaLinkBecauseFull } = await run(kinds, 1 << 20, 1);
    expect(viaLinkBecauseFull).toBe(0);
  });
});
