// Preloaded into the mock-engine child only (see src/engine.ts): Date.now() with microsecond resolution,
// so the mock's "wall" timestamps (Date.now() / 1000) can measure sub-millisecond delays.
import { performance } from "node:perf_hooks";

Date.now = () => performance.timeOrigin + performance.now();
