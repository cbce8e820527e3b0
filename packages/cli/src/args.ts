// Flag tables and parsing. One table per command drives parsing (node:util parseArgs, strict) and --help, so
// the two cannot drift apart; typed getters turn strings into checked numbers with a usage error naming the flag.
import { parseArgs } from "node:util";
import { CliUsageError } from "./errors.js";

export interface FlagSpec {
  /** Long name without the leading dashes. */
  name: string;
  type: "string" | "boolean";
  /** May be given several times (values are collected in order). */
  multiple?: boolean;
  /**
   * With `multiple`: also takes several values after one flag, as vLLM's argparse `nargs="+"` flags do
   * (`--api-key k1 k2`): the values up to the next token that starts with "-".
   */
  nargs?: boolean;
  /** Placeholder of the value in --help, e.g. "N". */
  value?: string;
  help: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Positional arguments in --help, e.g. "<method> [json-args]". */
  positionals?: string;
  /** Fewest / most positional arguments. */
  minPositionals?: number;
  maxPositionals?: number;
  /** Takes the connection flags (it talks to engines). */
  connects: boolean;
  flags: FlagSpec[];
  /** Extra --help lines (one paragraph). */
  notes?: string[];
}

/** Flags every command accepts. */
export const COMMON_FLAGS: FlagSpec[] = [
  { name: "help", type: "boolean", help: "print this help and exit" },
  { name: "verbose", type: "boolean", help: "print the stack of an error (and the client's warnings)" },
];

/** How to reach the engines: shared by every command that connects. */
export const CONNECTION_FLAGS: FlagSpec[] = [
  {
    name: "handshake-address",
    type: "string",
    value: "tcp://H:P",
    help: "handshake-owner: bind the handshake ROUTER here; engines (`vllm serve --headless`) dial it",
  },
  {
    name: "data-parallel-address",
    type: "string",
    value: "H",
    help: "vLLM spelling: handshake host (same as the engines' --data-parallel-address)",
  },
  {
    name: "data-parallel-rpc-port",
    type: "string",
    value: "P",
    help: "vLLM spelling: handshake port (same as the engines' --data-parallel-rpc-port)",
  },
  {
    name: "engine-count",
    type: "string",
    value: "N",
    help: "engines that must connect (default 1)",
  },
  {
    name: "data-parallel-size",
    type: "string",
    value: "N",
    help: "vLLM spelling of --engine-count",
  },
  {
    name: "ready-timeout-s",
    type: "string",
    value: "S",
    help: "bound on each handshake stage, in seconds (default $VLLM_ENGINE_READY_TIMEOUT_S or 600 as in vLLM; 30 with --mock)",
  },
  {
    name: "advertised-host",
    type: "string",
    value: "H",
    help: "host of the input/output sockets told to engines (default: the handshake host, or 127.0.0.1 for a wildcard)",
  },
  { name: "coordinator", type: "boolean", help: "handshake-owner: run the in-process DP coordinator" },
  {
    name: "input-address",
    type: "string",
    value: "A",
    help: "bootstrapped: bind the input ROUTER here (chosen by the supervisor)",
  },
  {
    name: "output-address",
    type: "string",
    value: "B",
    help: "bootstrapped: bind the output PULL here (chosen by the supervisor)",
  },
  {
    name: "engine-start-index",
    type: "string",
    value: "I",
    help: "bootstrapped: first engine index expected to register (default 0)",
  },
  {
    name: "data-parallel-start-rank",
    type: "string",
    value: "I",
    help: "vLLM spelling of --engine-start-index",
  },
  {
    name: "client-index",
    type: "string",
    value: "I",
    help: "bootstrapped: this frontend's index in the engines' output list (default 0)",
  },
  {
    name: "coordinator-address",
    type: "string",
    value: "A",
    help: "bootstrapped: the external DP coordinator's address",
  },
  {
    name: "mock",
    type: "boolean",
    help: "start the mock engine as a child process on a free port and connect to it (no vLLM needed)",
  },
  {
    name: "mock-engines",
    type: "string",
    value: "N",
    help: "--mock: engines in the mock process (default 1)",
  },
  {
    name: "mock-step-ms",
    type: "string",
    value: "MS",
    help: "--mock: duration of one engine step in ms (default 5; 0 = as fast as possible)",
  },
  {
    name: "mock-fault",
    type: "string",
    multiple: true,
    value: "F",
    help: "--mock: make the mock engine misbehave, to see the errors: bad-hello, no-ready, no-registration",
  },
];

export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

function allFlags(spec: CommandSpec): FlagSpec[] {
  return [...spec.flags, ...(spec.connects ? CONNECTION_FLAGS : []), ...COMMON_FLAGS];
}

/**
 * What Python's argparse takes for a negative number (`_negative_number_matcher` in Python 3.11's argparse,
 * the one vLLM's CLIs run on): such a token after an option that takes a value is that value, since no vLLM
 * parser has an option that looks like a negative number. "-1e3" or "-inf" do not match: argparse reads them
 * as options, so they stay an error here too.
 */
const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/;

/**
 * `--flag -1` → `--flag=-1` for the flags that take a value, so that node's parseArgs (which calls a value
 * starting with a dash ambiguous) reads negative numbers as vLLM's argparse CLIs do (`--top-k -1`).
 */
function joinNegativeValues(argv: readonly string[], takesValue: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (
      token.startsWith("--") &&
      takesValue.has(token.slice(2)) &&
      next !== undefined &&
      NEGATIVE_NUMBER.test(next)
    ) {
      out.push(`${token}=${next}`);
      i++;
    } else {
      out.push(token);
    }
  }
  return out;
}

/** `--flag a b` → `--flag a --flag b` for the flags that take several values (`nargs`). */
function expandNargs(flags: readonly FlagSpec[], argv: readonly string[]): string[] {
  const nargs = new Set(flags.filter((f) => f.nargs).map((f) => f.name));
  if (nargs.size === 0) return [...argv];
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    out.push(token);
    if (token === "--") {
      out.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("--") || token.includes("=") || !nargs.has(token.slice(2))) continue;
    if (i + 1 < argv.length) out.push(argv[++i]!);
    while (i + 1 < argv.length && !argv[i + 1]!.startsWith("-")) out.push(token, argv[++i]!);
  }
  return out;
}

/** Parses the arguments after the command name against the command's table. */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }> = {};
  for (const flag of allFlags(spec)) {
    options[flag.name] = { type: flag.type, ...(flag.multiple ? { multiple: true } : {}) };
  }
  options.help = { type: "boolean", short: "h" };
  const takesValue = new Set(
    allFlags(spec)
      .filter((flag) => flag.type === "string")
      .map((flag) => flag.name),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(expandNargs(allFlags(spec), argv), takesValue),
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    // parseArgs' messages name the flag ("Unknown option '--x'", "Option '--y <value>' argument missing").
    // parseArgs' advice for an unknown option is about positionals that start with '-': keep its first sentence.
    const { message, code } = error as Error & { code?: string };
    const text = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? message.split(/\.(\s|$)/)[0]! : message;
    throw new CliUsageError(text.replace(/\.$/, ""), spec.name);
  }
  const values = parsed.values as ParsedArgs["values"];
  if (!values.help) {
    const n = parsed.positionals.length;
    if (n < (spec.minPositionals ?? 0)) {
      throw new CliUsageError(`\`${spec.name}\` needs ${spec.positionals ?? "arguments"}`, spec.name);
    }
    if (n > (spec.maxPositionals ?? 0)) {
      throw new CliUsageError(
        `unexpected argument ${JSON.stringify(parsed.positionals[spec.maxPositionals ?? 0])}`,
        spec.name,
      );
    }
  }
  return { values, positionals: parsed.positionals };
}

/**
 * Splits `argv` into the command name and the rest, so that connection flags may also come first
 * (`vllm-engine-core --mock info`). Returns undefined when no command is given.
 */
export function splitCommand(argv: readonly string[]): { command: string | undefined; rest: string[] } {
  const takesValue = new Set(CONNECTION_FLAGS.filter((f) => f.type === "string").map((f) => f.name));
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") break;
    if (token.startsWith("-")) {
      const name = token.replace(/^--?/, "");
      if (!name.includes("=") && takesValue.has(name)) i++;
      continue;
    }
    return { command: token, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { command: undefined, rest: [...argv] };
}

// ---- typed getters ----------------------------------------------------------------------------------

export function str(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === "string" ? v : undefined;
}

export function bool(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

export function list(args: ParsedArgs, name: string): string[] {
  const v = args.values[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}

export function int(
  args: ParsedArgs,
  command: string,
  name: string,
  range: { min?: number; max?: number } = {},
): number | undefined {
  const raw = str(args, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  const min = range.min ?? Number.MIN_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (raw.trim() === "" || !Number.isSafeInteger(n) || n < min || n > max) {
    const bounds =
      range.max !== undefined ? ` in [${min}, ${max}]` : range.min !== undefined ? ` >= ${min}` : "";
    throw new CliUsageError(`--${name} needs an integer${bounds}, got ${JSON.stringify(raw)}`, command);
  }
  return n;
}

export function num(
  args: ParsedArgs,
  command: string,
  name: string,
  check: { ok: (n: number) => boolean; expected: string; allowInf?: boolean },
): number | undefined {
  const raw = str(args, name);
  if (raw === undefined) return undefined;
  const n = check.allowInf && /^\+?inf(inity)?$/i.test(raw.trim()) ? Number.POSITIVE_INFINITY : Number(raw);
  if (raw.trim() === "" || Number.isNaN(n) || (!Number.isFinite(n) && !check.allowInf) || !check.ok(n)) {
    throw new CliUsageError(`--${name} needs ${check.expected}, got ${JSON.stringify(raw)}`, command);
  }
  return n;
}

/** A comma-separated list of token ids ("1,2,3"). */
export function tokenIds(command: string, flag: string, raw: string, allowEmpty = false): number[] {
  const parts = raw.split(",").map((s) => s.trim());
  if (parts.length === 1 && parts[0] === "") {
    if (allowEmpty) return [];
    throw new CliUsageError(
      `--${flag} needs comma-separated token ids like 1,2,3, got an empty list`,
      command,
    );
  }
  return parts.map((s) => {
    const n = Number(s);
    if (s === "" || !Number.isInteger(n) || n < 0 || n > 2 ** 32 - 1) {
      throw new CliUsageError(
        `--${flag} needs comma-separated non-negative integer token ids like 1,2,3, got ${JSON.stringify(raw)}`,
        command,
      );
    }
    return n;
  });
}

// ---- help -----------------------------------------------------------------------------------------

function flagLines(flags: FlagSpec[]): string[] {
  return flags.map((f) => {
    const left = `  --${f.name}${f.type === "string" ? ` ${f.value ?? "VALUE"}` : ""}`;
    return `${left.padEnd(34)} ${f.help}${f.multiple ? " (repeatable)" : ""}`;
  });
}

export function commandHelp(spec: CommandSpec): string {
  const lines = [
    `usage: vllm-engine-core ${spec.name}${spec.positionals ? ` ${spec.positionals}` : ""} [flags]`,
    "",
    spec.summary,
  ];
  if (spec.notes) lines.push("", ...spec.notes);
  if (spec.flags.length > 0) lines.push("", "flags:", ...flagLines(spec.flags));
  if (spec.connects) {
    lines.push(
      "",
      "connection (one of: --handshake-address | --data-parallel-address + --data-parallel-rpc-port |",
      "            --input-address + --output-address | --mock):",
      ...flagLines(CONNECTION_FLAGS),
    );
  }
  lines.push("", "common:", ...flagLines(COMMON_FLAGS));
  return lines.join("\n");
}

export function mainHelp(commands: readonly CommandSpec[], version: string): string {
  const lines = [
    `vllm-engine-core ${version}: talk to vLLM's engine core (headless \`vllm serve\`) with no HTTP layer.`,
    "",
    "usage: vllm-engine-core <command> [flags]",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(20)} ${c.summary}`),
    "",
    "Run `vllm-engine-core <command> --help` for a command's flags. Every command that talks to engines",
    "takes the connection flags; `--mock` starts a mock engine so that everything works without vLLM.",
    "Exit codes: 0 ok, 1 runtime error, 2 usage error, 130 interrupted (Ctrl-C).",
    "",
    "  --help, -h                       print this help",
    "  --version                        print the version",
  ];
  return lines.join("\n");
}
