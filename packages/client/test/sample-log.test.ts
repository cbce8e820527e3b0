import { describe, expect, it } from "vitest";
import { SampleLog } from "../src/request-timings.ts";

describe("SampleLog (the inter-token latencies of one request)", () => {
  it("returns every value in order across chunk boundaries", () => {
    for (const count of [0, 1, 15, 16, 17, 48, 49, 5_000, 20_000]) {
      const log = new SampleLog();
      const values = Array.from({ length: count }, (_, i) => i * 0.001 + 1 / (i + 3));
      for (const v of values) log.add(v);
      expect(log.toArray()).toEqual(values);
      // Reading does not consume: the same list again, then more values after it.
      log.add(42);
      expect(log.toArray()).toEqual([...values, 42]);
    }
  });
});
