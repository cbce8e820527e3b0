// Command-line options of a tool's main script, with `--help` printing its usage and exiting.
import { type ParseArgsConfig, parseArgs } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

type Values<O extends Options> = ReturnType<typeof parseArgs<{ options: O }>>["values"];

export function parseToolArgs<const O extends Options>(usage: string, options: O): Values<O> {
  const { values } = parseArgs({ options: { ...options, help: { type: "boolean" } } });
  if ((values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return values as Values<O>;
}
