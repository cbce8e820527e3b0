// A deterministic long prompt: prose with varying numbers and words, so BPE merges do not collapse it.

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
