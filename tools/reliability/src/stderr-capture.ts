// Records what reaches this process's stderr while still printing it: the runtime reports undecodable
// output messages only as a Node warning emitted on its worker thread, which Node forwards to the main
// thread's process.stderr; this is the one place a test can observe it.
export interface StderrCapture {
  readonly text: () => string;
  /** Number of "dropped an undecodable output message" warnings seen so far. */
  readonly droppedWarnings: () => number;
  restore(): void;
}

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
    droppedWarnings: () => text.match(/dropped an undecodable output message/g)?.length ?? 0,
    restore() {
      process.stderr.write = original;
    },
  };
}
