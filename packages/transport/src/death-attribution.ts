// Which engine died, and why. Two signals reach the transport without naming an engine reliably:
// - a disconnect notification on the input ROUTER names the engine, but outputs it pushed just before dying
//   travel on another socket (the output PULL) and may still be queued, so the report waits a short grace;
// - the ENGINE_CORE_DEAD sentinel names no engine: the output socket it arrives on does when only one engine
//   pushes to it (the default: one output socket per engine). On a socket several engines share, the sender
//   is the engine whose connection drops around it: vLLM's engine process exits after the sentinel (after
//   waiting up to 5 s for its output thread and shutting its executor down). Either order can be observed
//   (the two sockets are read independently): an engine still in its disconnect grace when the sentinel
//   is read is taken as the sender. Anything less clear (several candidates, or the only recent disconnect
//   was already reported) waits for a disconnect among the live engines of the socket; if none comes
//   within the window, every live engine on it is reported dead — what vLLM's own clients do for any
//   sentinel. Failing a survivor is preferred to never failing the sender, whose streams would hang.

import { describeIndices } from "./identity.js";
import type { ConnectedEngine } from "./types.js";

export const SENTINEL_REASON =
  "the engine sent ENGINE_CORE_DEAD (a fatal error inside the engine; see its log)";

export interface DeathAttributionOptions {
  /** Reports a death; called at most once per engine by the owner (it deduplicates). */
  report(engineIndex: number, reason: string): void;
  isDead(engineIndex: number): boolean;
  /** Explains a disconnect without a sentinel (e.g. which heartbeat timeout applies). */
  vanishReason: string;
  /** How far apart a sentinel on a shared output socket and its sender's disconnect may be (`sentinelAttributionWindowMs`). */
  windowMs: number;
  /** After a disconnect notification, wait this long before reporting, so the engine's last outputs drain (`vanishGraceMs`). */
  graceMs: number;
}

interface UnattributedSentinel {
  readonly engines: readonly ConnectedEngine[];
  readonly timer: NodeJS.Timeout;
}

export class DeathAttribution {
  readonly #options: DeathAttributionOptions;
  readonly #windowMs: number;
  /** Engines whose disconnect is in its grace period. */
  readonly #vanishing = new Map<number, NodeJS.Timeout>();
  /** When each engine's connection dropped (performance.now()), for sentinels read after it. */
  readonly #disconnectedAt = new Map<number, number>();
  readonly #unattributed = new Set<UnattributedSentinel>();

  constructor(options: DeathAttributionOptions) {
    this.#options = options;
    this.#windowMs = options.windowMs;
  }

  /** The engine's input connection dropped. */
  onDisconnect(engine: ConnectedEngine): void {
    this.#disconnectedAt.set(engine.index, performance.now());
    for (const pending of this.#unattributed) {
      if (!pending.engines.includes(engine)) continue;
      clearTimeout(pending.timer);
      this.#unattributed.delete(pending);
      // The sentinel is the engine's last output message and it has been read: nothing left to drain.
      this.#explain(engine.index, true);
      return;
    }
    clearTimeout(this.#vanishing.get(engine.index));
    const timer = setTimeout(() => {
      this.#vanishing.delete(engine.index);
      this.#options.report(engine.index, this.#options.vanishReason);
    }, this.#options.graceMs);
    this.#vanishing.set(engine.index, timer);
  }

  /** An ENGINE_CORE_DEAD sentinel arrived on the output socket that `senders` push to. */
  onSentinel(senders: readonly ConnectedEngine[]): void {
    if (senders.length === 1) {
      this.#explain(senders[0]!.index, false);
      return;
    }
    // Read just after its sender's disconnect: that engine is still in its grace period.
    const inGrace = senders.filter((engine) => this.#vanishing.has(engine.index));
    if (inGrace.length === 1) {
      this.#explain(inGrace[0]!.index, true);
      return;
    }
    const live = senders.filter(
      (engine) => !this.#options.isDead(engine.index) && !this.#vanishing.has(engine.index),
    );
    if (live.length === 0) return; // every possible sender is dead or about to be reported
    const now = performance.now();
    const recentDisconnect = senders.some((engine) => {
      const at = this.#disconnectedAt.get(engine.index);
      return at !== undefined && now - at <= this.#windowMs;
    });
    if (live.length === 1 && inGrace.length === 0 && !recentDisconnect) {
      // Dead engines send nothing, so the only live engine on the socket is the sender.
      this.#explain(live[0]!.index, false);
      return;
    }
    const pending: UnattributedSentinel = {
      engines: live,
      timer: setTimeout(() => {
        this.#unattributed.delete(pending);
        const reason =
          `an ENGINE_CORE_DEAD sentinel arrived on the output socket shared by ${describeIndices(live.map((e) => e.index))} ` +
          `and none of them disconnected within ${this.#windowMs} ms, so it names no single engine and every one of ` +
          "them is considered dead (see the engines' logs)";
        for (const engine of live) this.#options.report(engine.index, reason);
      }, this.#windowMs),
    };
    this.#unattributed.add(pending);
  }

  close(): void {
    for (const timer of this.#vanishing.values()) clearTimeout(timer);
    this.#vanishing.clear();
    for (const pending of this.#unattributed) clearTimeout(pending.timer);
    this.#unattributed.clear();
  }

  /**
   * The sentinel came from this engine: report it with the sentinel's reason (the owner ignores a second
   * report of an engine already reported). `byDisconnect`: a shared socket, matched by the disconnect.
   */
  #explain(engineIndex: number, byDisconnect: boolean): void {
    clearTimeout(this.#vanishing.get(engineIndex));
    this.#vanishing.delete(engineIndex);
    this.#options.report(
      engineIndex,
      byDisconnect
        ? `${SENTINEL_REASON}; attributed by its input connection closing around it`
        : SENTINEL_REASON,
    );
  }
}
