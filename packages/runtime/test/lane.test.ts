// A thread's end of a lane hands on, in one callback, the messages already queued behind the one that woke
// it: outputs of engine steps that arrived together reach their streams before any reader resumes.
import { serializeError } from "@vllm-engine-core/errors";
import { describe, expect, it } from "vitest";
import { Lane, type LaneEvent } from "../src/caller/lane.ts";
import type { ToThread } from "../src/messages.ts";

function health(n: number): ToThread {
  return { t: "health", error: serializeError(new Error(String(n))) };
}

describe("Lane", () => {
  it("delivers the messages queued together before the microtasks of the first one run", async () => {
    const lane = new Lane();
    const seen: string[] = [];
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    lane.setOwner({
      onEvent(event: LaneEvent) {
        const n = (event as Extract<LaneEvent, { t: "health" }>).error.message;
        seen.push(`event ${n}`);
        if (n === "1") queueMicrotask(() => seen.push("microtask"));
        if (n === "3") setImmediate(resolveDone);
      },
      onEnded() {},
    });
    const hold = lane.hold();
    for (let n = 1; n <= 3; n++) lane.remote.postMessage(health(n));
    await done;
    hold();
    expect(seen).toEqual(["event 1", "event 2", "event 3", "microtask"]);
    lane.close(new Error("test over"));
  });

  it("stops handing on queued messages once the lane has ended", async () => {
    const lane = new Lane();
    const seen: string[] = [];
    const ended = new Promise<Error>((resolve) => {
      lane.setOwner({
        onEvent(event: LaneEvent) {
          seen.push((event as Extract<LaneEvent, { t: "health" }>).error.message);
        },
        onEnded: resolve,
      });
    });
    lane.remote.postMessage(health(1));
    lane.remote.postMessage({
      t: "gone",
      error: serializeError(new Error("runtime gone")),
    } satisfies ToThread);
    lane.remote.postMessage(health(2));
    expect((await ended).message).toBe("runtime gone");
    expect(seen).toEqual(["1"]);
  });
});
