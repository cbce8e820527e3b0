// The CLI's entry: picks the command, parses its flags, runs it under the lifecycle (Ctrl-C → abort →
// cleanups → exit 130), and turns any error into one line on stderr and an exit code.
import { readFileSync } from "node:fs";
import { commandHelp, mainHelp, parseCommandArgs, splitCommand } from "./args.js";
import { COMMANDS } from "./commands/index.js";
import {
  type CliInterruptedError,
  CliUsageError,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_USAGE,
  exitCodeFor,
  formatError,
} from "./errors.js";
import { Lifecycle } from "./lifecycle.js";
import { type Output, processOutput } from "./output.js";

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** Runs the command line `argv` (without node and the script) and resolves with the exit code. */
export async function main(argv: readonly string[], out: Output = processOutput()): Promise<number> {
  const verbose = argv.includes("--verbose");
  if (!verbose) {
    // The runtime thread logs engine anomalies as process warnings; without --verbose only the
    // command's own result and errors are printed.
    process.removeAllListeners("warning");
  }
  const { command: name, rest } = splitCommand(argv);
  if (name === undefined) {
    if (rest.includes("--version")) {
      out.line(version());
      return EXIT_OK;
    }
    if (rest.length === 0 || rest.includes("--help") || rest.includes("-h")) {
      out.line(
        mainHelp(
          COMMANDS.map((c) => c.spec),
          version(),
        ),
      );
      return rest.length === 0 ? EXIT_USAGE : EXIT_OK;
    }
    out.notice(formatError(new CliUsageError("no command given", undefined), verbose));
    return EXIT_USAGE;
  }
  const command = COMMANDS.find((c) => c.spec.name === name);
  if (command === undefined) {
    const known = COMMANDS.map((c) => c.spec.name).join(", ");
    out.notice(
      formatError(
        new CliUsageError(`unknown command ${JSON.stringify(name)} (commands: ${known})`, undefined),
        verbose,
      ),
    );
    return EXIT_USAGE;
  }

  const lifecycle = new Lifecycle();
  let code: number;
  try {
    const args = parseCommandArgs(command.spec, rest);
    if (args.values.help) {
      out.line(commandHelp(command.spec));
      code = EXIT_OK;
    } else {
      code = await command.run({ args, lifecycle, out, verbose });
    }
  } catch (error) {
    // Whatever failed after Ctrl-C failed because of it (aborted reads, closed sockets).
    const cause = lifecycle.interrupted ? lifecycle.signal.reason : error;
    code = exitCodeFor(cause);
    out.notice(formatError(cause, verbose));
  }
  await lifecycle.close();
  if (lifecycle.interrupted && !(code === EXIT_INTERRUPTED)) {
    // Ctrl-C during the cleanup of a command that had already ended.
    out.notice(formatError(lifecycle.signal.reason as CliInterruptedError, verbose));
    code = EXIT_INTERRUPTED;
  }
  return code;
}
