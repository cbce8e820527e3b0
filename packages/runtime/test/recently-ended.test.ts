// The runtime remembers how the latest requests ended so that a stray output can be told apart: expected
// after an abort, an anomaly after a finish or for an id it never saw.
import { describe, expect, it } from "vitest";
import { RecentlyEnded } from "../src/runtime-thread/recently-ended.ts";

describe("RecentlyEnded", () => {
  it("remembers how each id ended, forgetting the oldest beyond its capacity", () => {
    const ended = new RecentlyEnded(3);
    ended.add("a", "aborted");
    ended.add("b", "finished");
    ended.add("c", "aborted");
    expect([ended.get("a"), ended.get("b"), ended.get("c")]).toEqual(["aborted", "finished", "aborted"]);
    ended.add("d", "finished");
    expect(ended.get("a")).toBeUndefined();
    expect(ended.size).toBe(3);
  });

  it("re-adding an id makes it the newest; a live request with the id again removes it", () => {
    const ended = new RecentlyEnded(2);
    ended.add("a", "aborted");
    ended.add("b", "finished");
    ended.add("a", "finished"); // a is now newer than b
    ended.add("c", "aborted");
    expect(ended.get("b")).toBeUndefined();
    expect(ended.get("a")).toBe("finished");
    ended.delete("a");
    expect(ended.get("a")).toBeUndefined();
    expect(ended.size).toBe(1);
  });
});
