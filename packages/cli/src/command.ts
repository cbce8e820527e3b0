// What every command is: its flag table (parsing and --help) and a run function that gets the parsed flags,
// the lifecycle (abort signal + cleanups) and the output. It returns the exit code.
import type { CommandSpec, ParsedArgs } from "./args.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Output } from "./output.js";

export interface CommandContext {
  args: ParsedArgs;
  lifecycle: Lifecycle;
  out: Output;
  verbose: boolean;
}

export interface Command {
  spec: CommandSpec;
  run(ctx: CommandContext): Promise<number>;
}
