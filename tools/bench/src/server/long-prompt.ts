// A deterministic long prompt (prose with varying numbers and words, so BPE merges do not collapse it),
// and a 1 ms timer that records the longest gap of the event loop it runs on.

const WORDS = [
  "engine",
  "scheduler",
  "token",
  "stream",
  "frontend",
  "latency",
  "batch",
  "request",
  "socket",
  "thread",
  "prompt",
  "output",
];

/** About `tokens` Qwen3 tokens of text (≈ 5.3 tokens per sentence fragment below; trimmed by the caller). */
export function longPromptText(paragraphs: number): string {
  const out: string[] = [];
  for (let i = 0; i < paragraphs; i++) {
    const a = WORDS[i % WORDS.length]!;
    const b = WORDS[(i * 7 + 3) % WORDS.length]!;
    out.push(
      `Paragraph ${i}: the ${a} hands step ${i * 13} to the ${b}, which replies within ${(i * 37) % 1000} microseconds; ` +
        `nothing waits on ${a}s, and every ${b} keeps its own queue (item ${(i * 101) % 9973}).`,
    );
  }
  return out.join("\n");
}

/** Longest interval between two ticks of a 1 ms timer on this thread (what other streams on it would wait). */
export class LoopGapMonitor {
  #timer: NodeJS.Timeout | undefined;
  #last = 0;
  maxGapMs = 0;

  start(): void {
    this.maxGapMs = 0;
    this.#last = performance.now();
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.maxGapMs = Math.max(this.maxGapMs, now - this.#last);
      this.#last = now;
    }, 1);
  }

  stop(): number {
    clearInterval(this.#timer);
    this.maxGapMs = Math.max(this.maxGapMs, performance.now() - this.#last);
    return this.maxGapMs;
  }
}
