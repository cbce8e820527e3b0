// The two ways the probe blocks the connecting thread.
import { performance } from "node:perf_hooks";

/** "idle" is the reference: the caller just awaits a timer (its event loop stays free). */
export type BlockMode = "idle" | "parked" | "busy";

/** Event loop blocked, thread asleep in the kernel (no CPU): Atomics.wait on a SharedArrayBuffer. */
export function parkFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Event loop blocked, thread spinning (one core at 100 %). */
export function spinFor(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  if (x < 0) throw new Error("unreachable");
}

export async function blockFor(mode: BlockMode, ms: number): Promise<void> {
  if (mode === "idle") await new Promise((resolve) => setTimeout(resolve, ms));
  else if (mode === "parked") parkFor(ms);
  else spinFor(ms);
}
