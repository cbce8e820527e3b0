import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cpuBetween, parseStatCpuSeconds } from "../src/cpu.js";
import { summarizeProfile } from "../src/profile.js";
import { AsyncQueue } from "../src/queue.js";
import { CreditReader, CreditWriter } from "../src/replay/credit.js";
import { readRecording, writeRecording } from "../src/replay/recording.js";

const dir = mkdtempSync(join(tmpdir(), "bench-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseStatCpuSeconds", () => {
  it("reads utime + stime (fields 14, 15) even when the command name has spaces and parentheses", () => {
    const stat = "4242 (node (worker) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0";
    expect(parseStatCpuSeconds(stat)).toBe(3); // (250 + 50) ticks at 100 Hz
  });
});

describe("cpuBetween", () => {
  it("divides CPU seconds by wall seconds and skips ids missing at the start", () => {
    const a = { at: 0, processes: new Map([[1, 10]]), threads: new Map([[7, 1]]) };
    const b = {
      at: 2000,
      processes: new Map([
        [1, 11],
        [2, 5],
      ]),
      threads: new Map([[7, 2.5]]),
    };
    const d = cpuBetween(a, b);
    expect(d.processes).toEqual(new Map([[1, 0.5]]));
    expect(d.threads).toEqual(new Map([[7, 0.75]]));
  });
});

describe("replay recording", () => {
  it("round-trips messages with any number of frames, including empty ones", () => {
    const file = join(dir, "rec.bin");
    const messages = [[Uint8Array.of(1, 2, 3)], [Uint8Array.of(9), new Uint8Array(0), Uint8Array.of(7, 7)]];
    writeRecording(file, messages);
    const back = readRecording(file);
    expect(back.map((m) => m.map((f) => [...f]))).toEqual([[[1, 2, 3]], [[9], [], [7, 7]]]);
  });
});

describe("credit file", () => {
  it("publishes the delivered count at most once per `every` tokens, and on flush", () => {
    const file = join(dir, "credit");
    writeFileSync(file, Buffer.alloc(8));
    const writer = new CreditWriter(file, 100);
    const reader = new CreditReader(file);
    writer.add(60);
    expect(reader.delivered()).toBe(0);
    writer.add(60);
    expect(reader.delivered()).toBe(120);
    writer.add(10);
    expect(reader.delivered()).toBe(120);
    writer.flush();
    expect(reader.delivered()).toBe(130);
    expect(readFileSync(file).readDoubleLE(0)).toBe(130);
    writer.close();
    reader.close();
  });
});

describe("AsyncQueue", () => {
  it("hands items to a waiting reader, buffers otherwise, and ends on close", async () => {
    const q = new AsyncQueue<number>();
    const first = q.next();
    q.push(1);
    q.push(2);
    q.push(3);
    expect(await first).toEqual({ value: 1, done: false });
    expect(q.buffered).toBe(2);
    q.close();
    const seen: number[] = [];
    for await (const v of q) seen.push(v);
    expect(seen).toEqual([2, 3]);
    expect(await q.next()).toEqual({ value: undefined, done: true });
  });
});

describe("summarizeProfile", () => {
  it("attributes sample intervals to functions, leaves out idle time, and names the thread", () => {
    const profile = {
      startTime: 0,
      endTime: 10,
      nodes: [
        { id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1 }, children: [2, 3, 4] },
        {
          id: 2,
          callFrame: {
            functionName: "hot",
            url: "file:///r/tools/bench/dist/consumer-worker.js",
            lineNumber: 9,
          },
        },
        { id: 3, callFrame: { functionName: "(idle)", url: "", lineNumber: -1 } },
        { id: 4, callFrame: { functionName: "(garbage collector)", url: "", lineNumber: -1 } },
      ],
      samples: [2, 2, 3, 4, 2],
      timeDeltas: [0, 1000, 1000, 4000, 2000],
    };
    const s = summarizeProfile(profile, "/x/CPU.1.cpuprofile");
    expect(s.thread).toBe("consumer thread");
    expect(s.totalMs).toBe(8);
    expect(s.busyMs).toBe(4); // 4000 µs idle left out
    expect(s.top[0]).toMatchObject({
      name: "hot",
      where: "bench/dist/consumer-worker.js:10",
      selfMs: 2,
      share: 0.5,
    });
    expect(s.top[1]).toMatchObject({ name: "(garbage collector)", selfMs: 2 });
  });
});
