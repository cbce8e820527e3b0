// The measurement window every runner uses: it opens `warmupMs` after all streams delivered their first
// output and closes `measureMs` later. Checked on every delivery (no timer has to fire on a busy loop).
export type WindowPhase = "waiting" | "warmup" | "measuring" | "done";

export class MeasureWindow {
  phase: WindowPhase = "waiting";
  #flowing = 0;
  #opensAt = 0;
  #closesAt = 0;
  startedAt = 0;
  endedAt = 0;
  readonly #streams: number;
  readonly #warmupMs: number;
  readonly #measureMs: number;
  readonly #onPhase: (phase: WindowPhase) => void;

  constructor(o: {
    streams: number;
    warmupMs: number;
    measureMs: number;
    onPhase?: (phase: WindowPhase) => void;
  }) {
    this.#streams = o.streams;
    this.#warmupMs = o.warmupMs;
    this.#measureMs = o.measureMs;
    this.#onPhase = o.onPhase ?? (() => undefined);
  }

  /** A stream delivered its first output. */
  streamFlowing(now: number): void {
    if (++this.#flowing === this.#streams && this.phase === "waiting") {
      this.phase = "warmup";
      this.#opensAt = now + this.#warmupMs;
      this.#onPhase("warmup");
    }
  }

  /** Advances the phase; true when a delivery at `now` falls inside the window. */
  tick(now: number): boolean {
    if (this.phase === "warmup" && now >= this.#opensAt) {
      this.phase = "measuring";
      this.startedAt = now;
      this.#closesAt = now + this.#measureMs;
      this.#onPhase("measuring");
    }
    if (this.phase === "measuring" && now >= this.#closesAt) {
      this.phase = "done";
      this.endedAt = now;
      this.#onPhase("done");
    }
    return this.phase === "measuring";
  }

  get durationMs(): number {
    return this.endedAt - this.startedAt;
  }
}
