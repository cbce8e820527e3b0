// Preloaded into the mock-engine child only (see engine.ts): Date.now() with microsecond resolution.
import { performance } from "node:perf_hooks";

Date.now = () => performance.timeOrigin + performance.now();
