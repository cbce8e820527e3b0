// DP coordinator messages (vllm/v1/engine/coordinator.py): stats publish and frontend wake-up.
import { fail, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import { BOOL, FLOAT, INT } from "../schema/codec.js";
import { decodeCustom, encodeCustom } from "./run.js";

/**
 * Per engine: `[num_waiting_reqs, num_running_reqs, kv_cache_usage]`. Coordinators before vLLM main
 * 59a6b041 (#49204; every release up to v0.25) publish `[waiting, running]`: kvCacheUsage is then absent.
 */
export type EngineLoadCounts = [waiting: number, running: number, kvCacheUsage?: number];

export interface CoordinatorPublish {
  counts: EngineLoadCounts[] | null;
  wave: number;
  enginesRunning: boolean;
}

/** Coordinator → frontends: `[counts, wave, engines_running]`. */
export function encodeCoordinatorPublish(msg: CoordinatorPublish): Uint8Array {
  return encodeCustom("coordinator publish", undefined, (w) => {
    w.arrayHeader(3);
    if (msg.counts === null || msg.counts === undefined) {
      w.nil();
    } else {
      w.arrayHeader(msg.counts.length);
      msg.counts.forEach((c, i) => {
        try {
          const usage = c[2];
          w.arrayHeader(usage === undefined ? 2 : 3);
          INT.encode(w, c[0]);
          INT.encode(w, c[1]);
          if (usage !== undefined) FLOAT.encode(w, usage);
        } catch (err) {
          throw withSegment(err, `.counts[${i}]`);
        }
      });
    }
    INT.encode(w, msg.wave);
    BOOL.encode(w, msg.enginesRunning);
  })[0]!;
}

export function decodeCoordinatorPublish(payload: Uint8Array): CoordinatorPublish {
  return decodeCustom([payload], "coordinator publish", (r) => {
    const n = r.array();
    if (n < 3) fail(`expected [counts, wave, engines_running], got ${n} element(s)`);
    let counts: EngineLoadCounts[] | null = null;
    if (!r.nil()) {
      const m = r.array();
      counts = new Array<EngineLoadCounts>(m);
      for (let i = 0; i < m; i++) {
        try {
          const k = r.array();
          if (k < 2) fail(`expected [waiting, running(, kv_cache_usage)], got ${k} element(s)`);
          const waiting = r.int();
          const running = r.int();
          counts[i] = k === 2 ? [waiting, running] : [waiting, running, r.float()];
          for (let j = 3; j < k; j++) r.skip();
        } catch (err) {
          throw withSegment(err, `.counts[${i}]`);
        }
      }
    }
    const wave = seg(".wave", () => r.int());
    const enginesRunning = seg(".engines_running", () => r.bool());
    for (let i = 3; i < n; i++) r.skip();
    return { counts, wave, enginesRunning };
  });
}

export interface FrontendWakeup {
  /** Engine to exclude from the START_DP_WAVE broadcast: an index (Rust) or a 2-byte identity (Python). */
  engine: number | Uint8Array | null;
  wave: number;
}

/** Frontend → coordinator: `[engine, wave]`. */
export function encodeFrontendWakeup(msg: FrontendWakeup): Uint8Array {
  return encodeCustom("frontend wake-up", undefined, (w) => {
    w.arrayHeader(2);
    if (msg.engine === null || msg.engine === undefined) w.nil();
    else if (msg.engine instanceof Uint8Array) w.bin(msg.engine);
    else INT.encode(w, msg.engine);
    INT.encode(w, msg.wave);
  })[0]!;
}

export function decodeFrontendWakeup(payload: Uint8Array): FrontendWakeup {
  return decodeCustom([payload], "frontend wake-up", (r: Reader) => {
    const n = r.array();
    if (n < 2) fail(`expected [engine, wave], got ${n} element(s)`);
    const engine = seg(".engine", () => {
      if (r.nil()) return null;
      if (r.isInt()) return r.int();
      return r.bin();
    });
    const wave = seg(".wave", () => r.int());
    for (let i = 2; i < n; i++) r.skip();
    return { engine, wave };
  });
}

function seg<T>(segment: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw withSegment(err, segment);
  }
}
