// `utility <method> [json-args]` (any EngineCore utility, one result per engine) and the shortcuts that map to
// the client's typed helpers, whose defaults are vLLM's EngineCore defaults (vllm/v1/engine/core.py).
import type { EngineCoreClient, PauseMode } from "@vllm-engine-core/client";
import { bool, type FlagSpec, type ParsedArgs, str } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { CliUsageError, EXIT_OK } from "../errors.js";
import { toJson } from "../format.js";
import { untilAborted } from "../lifecycle.js";

const JSON_FLAG: FlagSpec = { name: "json", type: "boolean", help: "print the result as one JSON object" };

async function connect(ctx: CommandContext, command: string): Promise<EngineCoreClient> {
  const { client } = await openSession(planConnection(ctx.args, command), ctx.lifecycle, ctx.out.notice);
  return client;
}

function parseJsonArgs(raw: string | undefined): unknown[] {
  if (raw === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new CliUsageError(
      `json-args is not JSON (${(error as Error).message}); pass a JSON array of positional arguments, e.g. '[1, "abort"]'`,
      "utility",
    );
  }
  return Array.isArray(value) ? value : [value];
}

export const utilityCommand: Command = {
  spec: {
    name: "utility",
    summary: "call any engine utility method on every engine and print one result per engine",
    positionals: "<method> [json-args]",
    minPositionals: 1,
    maxPositionals: 2,
    connects: true,
    flags: [JSON_FLAG],
    notes: [
      "json-args is a JSON array of the method's positional arguments (a single non-array value is one",
      "argument), e.g. `utility sleep '[1, \"abort\"]'` or `utility collective_rpc '[\"echo\", null, [1], {}]'`.",
      "The method names are EngineCore's (is_sleeping, reset_prefix_cache, get_supported_tasks, ...).",
    ],
  },
  async run(ctx) {
    const [method, rawArgs] = ctx.args.positionals as [string, string | undefined];
    const callArgs = parseJsonArgs(rawArgs);
    const client = await connect(ctx, "utility");
    const results = await untilAborted(client.callUtility(method, callArgs), ctx.lifecycle.signal);
    const perEngine = results.map((result, i) => ({ engineIndex: client.engineIndices[i]!, result }));
    if (bool(ctx.args, "json")) {
      ctx.out.line(toJson({ method, args: callArgs, results: perEngine }));
    } else {
      for (const { engineIndex, result } of perEngine)
        ctx.out.line(`engine ${engineIndex}: ${toJson(result)}`);
    }
    return EXIT_OK;
  },
};

const PAUSE_MODES: readonly PauseMode[] = ["abort", "wait", "keep"];

function pauseMode(args: ParsedArgs, command: string): PauseMode {
  const mode = str(args, "mode") ?? "abort";
  if (!PAUSE_MODES.includes(mode as PauseMode)) {
    throw new CliUsageError(
      `--mode must be one of ${PAUSE_MODES.join(", ")}, got ${JSON.stringify(mode)}`,
      command,
    );
  }
  return mode as PauseMode;
}

const MODE_FLAG: FlagSpec = {
  name: "mode",
  type: "string",
  value: "M",
  help: "what happens to running requests: abort (default), wait (let them finish), keep (freeze them)",
};

interface Shortcut {
  name: string;
  summary: string;
  positionals?: string;
  minPositionals?: number;
  maxPositionals?: number;
  flags: FlagSpec[];
  /** Validates the flags (before connecting) and returns the call to make. */
  prepare(args: ParsedArgs): (client: EngineCoreClient) => Promise<unknown>;
  /** Human line for the result. */
  describe(result: unknown, engines: number): string;
}

const SHORTCUTS: Shortcut[] = [
  {
    name: "sleep",
    summary:
      "put the engines to sleep (pause scheduling; level >= 1 also offloads/discards weights and KV cache)",
    flags: [
      { name: "level", type: "string", value: "N", help: "sleep level (default 1)" },
      MODE_FLAG,
      JSON_FLAG,
    ],
    prepare(args) {
      const raw = str(args, "level");
      const level = raw === undefined ? 1 : Number(raw);
      if (!Number.isInteger(level) || level < 0) {
        throw new CliUsageError(`--level needs a non-negative integer, got ${JSON.stringify(raw)}`, "sleep");
      }
      const mode = pauseMode(args, "sleep");
      return (client) => client.sleep(level, mode);
    },
    describe: (_r, n) => `sleep: done on ${n} engine(s)`,
  },
  {
    name: "wake-up",
    summary: "wake the engines up (all parts, or only --tags)",
    flags: [
      {
        name: "tags",
        type: "string",
        value: "T,…",
        help: "comma-separated parts to wake: weights, kv_cache, scheduling (default all)",
      },
      JSON_FLAG,
    ],
    prepare(args) {
      const raw = str(args, "tags");
      const tags =
        raw === undefined
          ? null
          : raw
              .split(",")
              .map((t) => t.trim())
              .filter(Boolean);
      return (client) => client.wakeUp(tags);
    },
    describe: (_r, n) => `wake-up: done on ${n} engine(s)`,
  },
  {
    name: "is-sleeping",
    summary: "print whether the engines sleep (they must agree)",
    flags: [JSON_FLAG],
    prepare: () => (client) => client.isSleeping(),
    describe: (r) => String(r),
  },
  {
    name: "reset-prefix-cache",
    summary: "reset the prefix cache of every engine; prints true only when every engine reset it",
    flags: [
      {
        name: "reset-running-requests",
        type: "boolean",
        help: "also preempt running requests to free their blocks",
      },
      { name: "reset-connector", type: "boolean", help: "also reset the KV connector's cache" },
      JSON_FLAG,
    ],
    prepare(args) {
      const running = bool(args, "reset-running-requests");
      const connector = bool(args, "reset-connector");
      return (client) => client.resetPrefixCache(running, connector);
    },
    describe: (r) => String(r),
  },
  {
    name: "pause",
    summary: "pause scheduling on every engine",
    flags: [
      MODE_FLAG,
      { name: "no-clear-cache", type: "boolean", help: "keep the prefix cache (vLLM clears it by default)" },
      JSON_FLAG,
    ],
    prepare(args) {
      const mode = pauseMode(args, "pause");
      const clearCache = !bool(args, "no-clear-cache");
      return (client) => client.pauseScheduler(mode, clearCache);
    },
    describe: (_r, n) => `pause: done on ${n} engine(s)`,
  },
  {
    name: "resume",
    summary: "resume scheduling on every engine",
    flags: [JSON_FLAG],
    prepare: () => (client) => client.resumeScheduler(),
    describe: (_r, n) => `resume: done on ${n} engine(s)`,
  },
  {
    name: "is-paused",
    summary: "print whether scheduling is paused (the engines must agree)",
    flags: [JSON_FLAG],
    prepare: () => (client) => client.isSchedulerPaused(),
    describe: (r) => String(r),
  },
  {
    name: "profile",
    summary: "start or stop the engines' profiler (vLLM needs --profiler-config on the server)",
    positionals: "start|stop",
    minPositionals: 1,
    maxPositionals: 1,
    flags: [
      { name: "profile-prefix", type: "string", value: "P", help: "prefix of the trace files" },
      JSON_FLAG,
    ],
    prepare(args) {
      const action = args.positionals[0];
      if (action !== "start" && action !== "stop") {
        throw new CliUsageError(`\`profile\` needs start or stop, got ${JSON.stringify(action)}`, "profile");
      }
      const prefix = str(args, "profile-prefix") ?? null;
      return (client) => (action === "start" ? client.startProfile(prefix) : client.stopProfile(prefix));
    },
    describe: (_r, n) => `profile: done on ${n} engine(s)`,
  },
];

export const shortcutCommands: Command[] = SHORTCUTS.map((s) => ({
  spec: {
    name: s.name,
    summary: s.summary,
    connects: true,
    flags: s.flags,
    ...(s.positionals !== undefined ? { positionals: s.positionals } : {}),
    ...(s.minPositionals !== undefined ? { minPositionals: s.minPositionals } : {}),
    ...(s.maxPositionals !== undefined ? { maxPositionals: s.maxPositionals } : {}),
  },
  async run(ctx) {
    const call = s.prepare(ctx.args);
    const client = await connect(ctx, s.name);
    const result = (await untilAborted(call(client), ctx.lifecycle.signal)) ?? null;
    if (bool(ctx.args, "json")) {
      ctx.out.line(toJson({ command: s.name, engineCount: client.engineCount, result }));
    } else {
      ctx.out.line(s.describe(result, client.engineCount));
    }
    return EXIT_OK;
  },
}));
