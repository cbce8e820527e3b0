// The utility calls of one connection in progress on the runtime thread: one call id per engine, the
// caller's bounds (timeout, abort), and the replies matched back to their calls. A reply for a call that
// timed out or was aborted is late, not unknown (it is remembered for a while).
import { UtilityTimeoutError } from "@vllm-engine-core/errors";
import { encodeUtilityCall, type UtilityOutput } from "@vllm-engine-core/protocol";
import type { EngineIO } from "./engine-io.js";
import type { EngineState } from "./engines.js";
import { RecentlyEnded } from "./recently-ended.js";

/** The caller's bounds of one utility call (see RuntimeConnection.callUtility). */
export interface UtilityBounds {
  timeoutMs?: number | null;
  signal?: AbortSignal;
}

interface PendingUtility {
  readonly engine: EngineState;
  resolve(output: UtilityOutput): void;
  reject(error: Error): void;
}

/** Utility calls that timed out or were aborted lately (call id → engine), so late replies are told apart. */
const RECENTLY_CANCELLED_CALLS = 4_096;

export type ReplyOutcome = "answered" | "late" | "unknown";

export class UtilityCalls {
  readonly #pending = new Map<bigint, PendingUtility>();
  readonly #cancelled = new RecentlyEnded<bigint, number>(RECENTLY_CANCELLED_CALLS);
  readonly #io: EngineIO;
  readonly #clientIndex: number;
  #nextCallId = 1n;

  constructor(io: EngineIO, clientIndex: number) {
    this.#io = io;
    this.#clientIndex = clientIndex;
  }

  /** Calls `method` on every engine of `engines`; their outputs in that order. */
  async call(
    engines: readonly EngineState[],
    method: string,
    args: unknown[],
    bounds: UtilityBounds,
  ): Promise<UtilityOutput[]> {
    // Phase 1: one call id per engine, registered before anything is sent.
    const calls: {
      engine: EngineState;
      callId: bigint;
      result: Promise<UtilityOutput>;
      frames: Uint8Array[];
    }[] = [];
    try {
      for (const engine of engines) {
        const callId = this.#nextCallId++;
        const result = new Promise<UtilityOutput>((resolve, reject) => {
          this.#pending.set(callId, { engine, resolve, reject });
        });
        // Rejections are observed in phase 3, or never when the call is rolled back.
        result.catch(() => {});
        const call = { engine, callId, result, frames: [] as Uint8Array[] };
        calls.push(call);
        call.frames = encodeUtilityCall({ clientIndex: this.#clientIndex, callId, method, args });
      }
    } catch (error) {
      // An argument could not be encoded: nothing was sent.
      for (const call of calls) this.#pending.delete(call.callId);
      throw error;
    }
    const answered = async () => {
      // Phase 2: send to every engine.
      try {
        await Promise.all(calls.map((call) => this.#io.send(call.engine.index, call.frames)));
      } catch (error) {
        // Roll back: replies to calls that did reach an engine are dropped.
        for (const call of calls) this.#pending.delete(call.callId);
        throw error;
      }
      // Phase 3: every engine's answer, in engine order.
      return Promise.all(calls.map((call) => call.result));
    };
    return this.#bounded(answered(), method, calls, bounds);
  }

  /** Matches an engine's reply to its call. */
  resolve(engineIndex: number, output: UtilityOutput): ReplyOutcome {
    const pending = this.#pending.get(output.callId);
    if (pending === undefined && this.#cancelled.get(output.callId) === engineIndex) {
      // Its caller gave up (timeout or abort): expected, dropped.
      this.#cancelled.delete(output.callId);
      return "late";
    }
    if (pending === undefined || pending.engine.index !== engineIndex) return "unknown";
    this.#pending.delete(output.callId);
    pending.resolve(output);
    return "answered";
  }

  /** Fails call `callId` on `engineIndex` (false when no such call waits). */
  fail(callId: bigint, engineIndex: number, error: Error): boolean {
    const pending = this.#pending.get(callId);
    if (pending === undefined || pending.engine.index !== engineIndex) return false;
    this.#pending.delete(callId);
    pending.reject(error);
    return true;
  }

  /** Fails every call waiting on `engine`; returns how many. */
  failEngine(engine: EngineState, error: Error): number {
    let failed = 0;
    for (const [callId, pending] of this.#pending) {
      if (pending.engine !== engine) continue;
      this.#pending.delete(callId);
      pending.reject(error);
      failed++;
    }
    return failed;
  }

  failAll(error: Error): void {
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }

  /**
   * `work`, unless the caller's timeout fires or its signal aborts first: then the calls still pending are
   * forgotten (their call ids remembered, so a reply that still comes is counted as late) and the call
   * rejects with UtilityTimeoutError naming the engines that had not answered, or the signal's reason.
   */
  #bounded<T>(
    work: Promise<T>,
    method: string,
    calls: readonly { engine: EngineState; callId: bigint }[],
    bounds: UtilityBounds,
  ): Promise<T> {
    const { timeoutMs, signal } = bounds;
    if ((timeoutMs === undefined || timeoutMs === null) && signal === undefined) return work;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settled = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const giveUp = (error: unknown) => {
        settled();
        for (const call of calls) {
          if (this.#pending.delete(call.callId)) this.#cancelled.add(call.callId, call.engine.index);
        }
        work.catch(() => {});
        reject(error);
      };
      const onAbort = () => giveUp(signal!.reason);
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs !== null) {
        timer = setTimeout(() => {
          const silent = calls.filter((call) => this.#pending.has(call.callId)).map((c) => c.engine.index);
          giveUp(new UtilityTimeoutError({ method, engineIndices: silent, timeoutMs }));
        }, timeoutMs);
      }
      work.then(
        (value) => {
          settled();
          resolve(value);
        },
        (error: unknown) => {
          settled();
          reject(error);
        },
      );
    });
  }
}
