// Where a command writes: results to stdout, progress and notices to stderr (so `--json` stdout stays
// machine-readable), and whether stdout is a terminal (live progress bar) or not (plain lines).

export interface Output {
  /** One line of the command's result on stdout. */
  line(text: string): void;
  /** Raw text on stdout (streamed token ids). */
  write(text: string): void;
  /** A notice for the user on stderr. */
  notice(text: string): void;
  /** Raw text on stderr (the progress bar). */
  writeErr(text: string): void;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  readonly columns: number;
}

export function processOutput(): Output {
  return {
    line: (text) => process.stdout.write(`${text}\n`),
    write: (text) => process.stdout.write(text),
    notice: (text) => process.stderr.write(`${text}\n`),
    writeErr: (text) => process.stderr.write(text),
    stdoutIsTty: process.stdout.isTTY === true,
    stderrIsTty: process.stderr.isTTY === true,
    columns: process.stderr.columns || process.stdout.columns || 80,
  };
}
