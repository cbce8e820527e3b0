// Progress of a benchmark run. On a terminal: one bar redrawn in place (like vllm bench serve's tqdm) with
// requests done, request rate and output tokens/s. Otherwise (pipes, CI logs): a plain line at every tenth of
// the run, so logs stay short and readable.
import type { Output } from "../output.js";

const REDRAW_MS = 100;

export class BenchProgress {
  readonly #out: Output;
  readonly #total: number;
  readonly #label: string;
  readonly #tty: boolean;
  readonly #started = performance.now();
  #done = 0;
  #tokens = 0;
  #lastDecile = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(out: Output, total: number, label: string, enabled: boolean) {
    this.#out = out;
    this.#total = total;
    this.#label = label;
    this.#tty = enabled && out.stderrIsTty;
    if (this.#tty) {
      this.#timer = setInterval(() => this.#draw(), REDRAW_MS);
      this.#timer.unref();
      this.#draw();
    }
  }

  tokens(n: number): void {
    this.#tokens += n;
  }

  requestDone(): void {
    this.#done++;
    if (this.#tty) return;
    const decile = Math.floor((this.#done * 10) / this.#total);
    if (decile > this.#lastDecile) {
      this.#lastDecile = decile;
      const secs = (performance.now() - this.#started) / 1000;
      this.#out.notice(
        `${this.#label}: ${this.#done}/${this.#total} requests done (${Math.floor((this.#done * 100) / this.#total)}%), ${secs.toFixed(1)} s`,
      );
    }
  }

  #draw(): void {
    const secs = Math.max((performance.now() - this.#started) / 1000, 1e-3);
    const stats = ` ${this.#done}/${this.#total} [${secs.toFixed(1)}s, ${(this.#done / secs).toFixed(2)} req/s, ${(this.#tokens / secs).toFixed(0)} tok/s]`;
    const prefix = `${this.#label}: `;
    // A fixed bar width (from the terminal's, leaving room for the figures) so the line does not jitter.
    const width = Math.max(10, Math.min(40, this.#out.columns - prefix.length - 60));
    const filled = Math.round((this.#done / this.#total) * width);
    const percent = `${String(Math.floor((this.#done * 100) / this.#total)).padStart(3)}%`;
    this.#out.writeErr(
      `\r${prefix}${percent}|${"█".repeat(filled)}${" ".repeat(width - filled)}|${stats}\x1b[K`,
    );
  }

  /** Final redraw and newline (terminal), or nothing (plain lines already say 100%). */
  finish(): void {
    if (!this.#tty) return;
    clearInterval(this.#timer);
    this.#draw();
    this.#out.writeErr("\n");
  }
}
