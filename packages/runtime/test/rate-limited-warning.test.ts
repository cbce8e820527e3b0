// The runtime logs dropped engine output as process warnings, rate-limited so that a misbehaving engine
// cannot flood stderr: the first one at once, then at most one "N more like this" summary per interval, and
// a pending summary is emitted when the connection closes (no suppressed count is lost).
import { afterEach, describe, expect, it } from "vitest";
import { RateLimitedWarning } from "../src/runtime-thread/diagnostics.ts";

const seen: { code: string | undefined; message: string }[] = [];
const onWarning = (warning: Error & { code?: string }) =>
  seen.push({ code: warning.code, message: warning.message });
process.on("warning", onWarning);
afterEach(() => {
  seen.length = 0;
});
const nextTick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("RateLimitedWarning", () => {
  it("emits the first warning at once and sums the rest into one summary per interval", async () => {
    const warning = new RateLimitedWarning("TEST_CODE", 300);
    for (let i = 1; i <= 1000; i++) warning.emit(`bad message ${i}`);
    await nextTick();
    expect(seen).toEqual([{ code: "TEST_CODE", message: "bad message 1" }]);
    await sleep(450);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.message).toBe("999 more like this in the last 0.3 s; the latest: bad message 1000");
    // Quiet interval after the summary: the next one is held back too, and flushed on close.
    warning.emit("bad message 1001");
    await nextTick();
    expect(seen).toHaveLength(2);
    warning.close();
    await nextTick();
    expect(seen[2]!.message).toBe("1 more like this in the last 0.3 s; the latest: bad message 1001");
  });

  it("after a quiet interval the next warning is immediate again; close with nothing pending emits nothing", async () => {
    const warning = new RateLimitedWarning("TEST_CODE", 100);
    warning.emit("first");
    await sleep(150);
    warning.emit("second");
    await nextTick();
    expect(seen.map((w) => w.message)).toEqual(["first", "second"]);
    warning.close();
    await sleep(150);
    expect(seen).toHaveLength(2);
  });
});
