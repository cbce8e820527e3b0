import { describe, expect, it } from "vitest";
import { MeasureWindow, type WindowPhase } from "../src/window.js";

describe("MeasureWindow", () => {
  it("opens warmup after every stream flowed, measures for measureMs, then closes", () => {
    const phases: WindowPhase[] = [];
    const w = new MeasureWindow({
      streams: 2,
      warmupMs: 100,
      measureMs: 1000,
      onPhase: (p) => phases.push(p),
    });
    expect(w.tick(0)).toBe(false);
    w.streamFlowing(10);
    expect(w.phase).toBe("waiting"); // one of two streams
    w.streamFlowing(20);
    expect(w.phase).toBe("warmup");
    expect(w.tick(119)).toBe(false);
    expect(w.tick(120)).toBe(true);
    expect(w.startedAt).toBe(120);
    expect(w.tick(1119)).toBe(true);
    expect(w.tick(1120)).toBe(false);
    expect(w.phase).toBe("done");
    expect(w.durationMs).toBe(1000);
    expect(phases).toEqual(["warmup", "measuring", "done"]);
  });

  it("closes on the first tick past the end even after a long gap (duration is the real one)", () => {
    const w = new MeasureWindow({ streams: 1, warmupMs: 0, measureMs: 10 });
    w.streamFlowing(0);
    expect(w.tick(0)).toBe(true);
    expect(w.tick(500)).toBe(false);
    expect(w.durationMs).toBe(500);
  });

  it("ignores extra first-output reports", () => {
    const w = new MeasureWindow({ streams: 1, warmupMs: 5, measureMs: 10 });
    w.streamFlowing(0);
    w.streamFlowing(3);
    w.tick(6);
    expect(w.startedAt).toBe(6);
  });
});
