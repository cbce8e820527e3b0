// Records what reaches this process's stderr while still printing it: the runtime logs dropped output
// messages as Node warnings emitted on its worker thread (rate-limited: the first one, then at most one
// "N more like this" summary per 10 s), which Node forwards to the main thread's process.stderr.
export interface StderrCapture {
  readonly text: () => string;
  /** Number of "dropped an undecodable engine output message" warning lines seen so far. */
  readonly droppedWarnings: () => number;
  /** Undecodable messages those warnings account for (a summary line counts its N). */
  readonly droppedReported: () => number;
  /** Number of warning lines about outputs for requests that are not live (after a finish, unknown id). */
  readonly strayOutputWarnings: () => number;
  /** Number of "answered utility call … no caller is waiting for" warning lines seen so far. */
  readonly unknownUtilityWarnings: () => number;
  restore(): void;
}

const DROPPED =
  /(?:(\d+) more like this in the last [\d.]+ s; the latest: )?vllm-engine-core: dropped an undecodable engine output message/g;

export function captureStderr(options: { echo?: boolean } = {}): StderrCapture {
  const original = process.stderr.write;
  let text = "";
  process.stderr.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    if (options.echo === false) {
      const cb = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      cb?.();
      return true;
    }
    return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof process.stderr.write;
  return {
    text: () => text,
    droppedWarnings: () => text.match(DROPPED)?.length ?? 0,
    droppedReported: () =>
      [...text.matchAll(DROPPED)].reduce((sum, m) => sum + (m[1] === undefined ? 1 : Number(m[1])), 0),
    strayOutputWarnings: () => text.match(/\[VLLM_STRAY_OUTPUT\]/g)?.length ?? 0,
    unknownUtilityWarnings: () => text.match(/which no caller is waiting for/g)?.length ?? 0,
    restore() {
      process.stderr.write = original;
    },
  };
}
