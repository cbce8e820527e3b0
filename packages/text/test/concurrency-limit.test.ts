import { describe, expect, it } from "vitest";
import { ConcurrencyLimit } from "../src/concurrency-limit.js";
import { InvalidTextOptionsError } from "../src/index.js";

/** A task that settles when told to, recording when it started. */
function deferredTask(started: number[], id: number) {
  let settle!: (ok: boolean) => void;
  const done = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  const task = async () => {
    started.push(id);
    if (!(await done)) throw new Error(`task ${id} failed`);
    return id;
  };
  return { task, settle };
}

describe("ConcurrencyLimit", () => {
  it("runs at most `limit` tasks at once and starts the others in arrival order", async () => {
    const limit = new ConcurrencyLimit(2);
    const started: number[] = [];
    const tasks = Array.from({ length: 6 }, (_, i) => deferredTask(started, i));
    const results = tasks.map((t) => limit.run(t.task));
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect([limit.running, limit.waiting]).toEqual([2, 4]);
    tasks[1]!.settle(true);
    await results[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    expect(limit.running).toBe(2);
    for (const t of tasks) t.settle(true);
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it("frees the slot of a task that throws, and passes the error on", async () => {
    const limit = new ConcurrencyLimit(1);
    const started: number[] = [];
    const failing = deferredTask(started, 0);
    const next = deferredTask(started, 1);
    const first = limit.run(failing.task);
    const second = limit.run(next.task);
    failing.settle(false);
    await expect(first).rejects.toThrow("task 0 failed");
    next.settle(true);
    expect(await second).toBe(1);
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it("frees the slot of a task that throws before its first await", async () => {
    const limit = new ConcurrencyLimit(1);
    const failing = limit.run(() => {
      throw new Error("thrown at once");
    });
    const next = limit.run(async () => "ran");
    await expect(failing).rejects.toThrow("thrown at once");
    expect(await next).toBe("ran");
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it("keeps a standing backlog in order (the queue compacts as it drains)", async () => {
    const limit = new ConcurrencyLimit(1);
    const order: number[] = [];
    const all = Array.from({ length: 5000 }, (_, i) =>
      limit.run(async () => {
        order.push(i);
        await Promise.resolve();
      }),
    );
    await Promise.all(all);
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect([limit.running, limit.waiting]).toEqual([0, 0]);
  });

  it("refuses a limit that is not a positive integer (Infinity: no bound)", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      const error = (() => {
        try {
          new ConcurrencyLimit(bad, "maxConcurrentEncodes");
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidTextOptionsError);
      expect(error).toMatchObject({ code: "INVALID_TEXT_OPTIONS", field: "maxConcurrentEncodes" });
    }
    expect(new ConcurrencyLimit(Number.POSITIVE_INFINITY).limit).toBe(Number.POSITIVE_INFINITY);
  });
});
