// Utility (RPC) methods of the mock engine, modelled on the public methods of vLLM's EngineCore /
// EngineCoreProc, with vLLM's failure texts: `Call to <method> method failed: <str(exception)>`, where the
// exception text is what Python would raise (AttributeError for unknown names, TypeError for a missing
// argument, an empty AssertionError for too many arguments, the method's own ValueErrors, ...).

/** The engine-side state and actions the utilities need. */
export interface UtilityHost {
  readonly engineIndex: number;
  readonly worldSize: number;
  readonly executor: ExecutorState;
  numRunning(): number;
  /** Returns undefined when the pause completed at once, or a promise that settles when the engine is idle. */
  pauseScheduler(mode: "abort" | "wait" | "keep", clearCache: boolean): Promise<void> | undefined;
  resumeScheduler(): void;
  isSchedulerPaused(): boolean;
}

export interface MockLoRA {
  loraName: string;
  loraIntId: number;
  loraPath: string;
}

/** What vLLM keeps in the model executor (sleep state, LoRA adapters, profiler, weight version). */
export class ExecutorState {
  isSleeping = false;
  sleepingTags = new Set<string>();
  readonly loras = new Map<number, MockLoRA>();
  readonly pinned = new Set<number>();
  profiling = false;
  weightVersion = "default";
}

/** A Python-side exception: becomes `Call to <method> method failed: <message>`. */
class PyError extends Error {}

export type UtilityOutcome = { ok: true; value: unknown } | { ok: false; failureMessage: string };

interface Param {
  name: string;
  required?: boolean;
}

interface UtilityMethod {
  /** Class whose qualname Python prints in TypeErrors. */
  owner: "EngineCore" | "EngineCoreProc" | "MockEngineCore";
  /** Positional parameters after self; `variadic` accepts any number (like *args). */
  params: Param[] | "variadic";
  run(host: UtilityHost, args: unknown[]): unknown;
}

const opt = (name: string): Param => ({ name });
const req = (name: string): Param => ({ name, required: true });

function truthy(value: unknown): boolean {
  // Python truthiness for the values msgpack can carry.
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (typeof value === "bigint") return value !== 0n;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object" && !(value instanceof Uint8Array)) return Object.keys(value).length > 0;
  if (value instanceof Uint8Array) return value.length > 0;
  return true;
}

function pyRepr(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  return String(value);
}

function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

function asInt(value: unknown): number | undefined {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" && Number.isInteger(value)) return value;
  return undefined;
}

function msgspecTypeName(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "string") return "str";
  if (typeof value === "bigint") return "int";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (Array.isArray(value)) return "array";
  if (value instanceof Uint8Array) return "bytes";
  return "object";
}

/** msgspec.convert(value, LoRARequest) followed by LoRARequest.__post_init__. */
function convertLoRARequest(value: unknown): MockLoRA & { loadInplace: boolean } {
  if (!Array.isArray(value)) throw new PyError(`Expected \`array\`, got \`${msgspecTypeName(value)}\``);
  if (value.length < 2) throw new PyError(`Expected \`array\` of at least length 2, got ${value.length}`);
  const [name, id, path = "", baseModel = null, tensorizer = null, loadInplace = false, is3d = false] = value;
  const expect = (ok: boolean, type: string, v: unknown, at: number) => {
    if (!ok) throw new PyError(`Expected \`${type}\`, got \`${msgspecTypeName(v)}\` - at \`$[${at}]\``);
  };
  expect(typeof name === "string", "str", name, 0);
  const loraIntId = asInt(id);
  expect(loraIntId !== undefined && typeof id !== "boolean", "int", id, 1);
  expect(typeof path === "string", "str", path, 2);
  expect(baseModel === null || typeof baseModel === "string", "str | null", baseModel, 3);
  expect(
    tensorizer === null || (typeof tensorizer === "object" && !Array.isArray(tensorizer)),
    "object | null",
    tensorizer,
    4,
  );
  expect(typeof loadInplace === "boolean", "bool", loadInplace, 5);
  expect(typeof is3d === "boolean", "bool", is3d, 6);
  if ((loraIntId as number) < 1) throw new PyError(`id must be > 0, got ${loraIntId}`);
  if (path === "") throw new PyError("lora_path cannot be empty");
  return { loraName: name as string, loraIntId: loraIntId as number, loraPath: path as string, loadInplace };
}

function loraIdArg(value: unknown): number {
  const id = asInt(value);
  if (id === undefined)
    throw new PyError(`'>' not supported between instances of '${pyType(value)}' and 'int'`);
  if (id <= 0) throw new PyError("lora_id must be greater than 0.");
  return id;
}

function pyType(value: unknown): string {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "string") return "str";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "bigint") return "int";
  if (Array.isArray(value)) return "list";
  if (value instanceof Uint8Array) return "bytes";
  return "dict";
}

function pauseMode(value: unknown): "abort" | "wait" | "keep" {
  if (value === "abort" || value === "wait" || value === "keep") return value;
  throw new PyError(`Invalid pause mode: ${pyStr(value)}`);
}

function executorSleep(host: UtilityHost, level: number): void {
  const ex = host.executor;
  if (ex.isSleeping) return; // vLLM logs "Executor is already sleeping." and returns
  ex.sleepingTags = new Set(["weights", "kv_cache"]);
  ex.isSleeping = true;
  void level;
}

function executorWakeUp(host: UtilityHost, tags: string[] | null): void {
  const ex = host.executor;
  if (!ex.isSleeping) return; // "Executor is not sleeping."
  if (tags && tags.length > 0) {
    for (const tag of tags) if (!ex.sleepingTags.has(tag)) return; // "Tag ... is not in sleeping tags"
    for (const tag of tags) ex.sleepingTags.delete(tag);
  } else {
    ex.sleepingTags.clear();
  }
  if (ex.sleepingTags.size === 0) ex.isSleeping = false;
}

/** Methods of the mock workers reachable through collective_rpc (vLLM's run_method on each worker). */
function workerMethod(rank: number, method: unknown, args: unknown[], _kwargs: unknown): unknown {
  if (typeof method !== "string") {
    throw new PyError(
      "collective_rpc on the mock engine takes a method name (cloudpickled callables are not supported)",
    );
  }
  switch (method) {
    case "echo":
      return args;
    case "rank":
      return rank;
    case "check_health":
      return null;
    default:
      throw new PyError(`Method '${method}' is not implemented.`);
  }
}

const METHODS: Record<string, UtilityMethod> = {
  get_supported_tasks: { owner: "EngineCore", params: [], run: () => ["generate"] },
  is_sleeping: {
    owner: "EngineCore",
    params: [],
    run: (h) => h.isSchedulerPaused() || h.executor.isSleeping,
  },
  sleep: {
    owner: "EngineCore",
    params: [opt("level"), opt("mode")],
    run: (h, [level = 1, mode = "abort"]) => {
      const lvl = asInt(level);
      if (lvl === undefined)
        throw new PyError(`'>=' not supported between instances of '${pyType(level)}' and 'int'`);
      const pause = h.pauseScheduler(pauseMode(mode), lvl >= 1);
      if (lvl < 1) return pause ? pause.then(() => null) : null;
      if (!pause) {
        executorSleep(h, lvl);
        return null;
      }
      return pause.then(() => {
        executorSleep(h, lvl);
        return null;
      });
    },
  },
  wake_up: {
    owner: "EngineCore",
    params: [opt("tags")],
    run: (h, [tags = null]) => {
      if (tags !== null && !Array.isArray(tags))
        throw new PyError(`'${pyType(tags)}' object is not iterable`);
      let rest = tags as string[] | null;
      if (rest?.includes("scheduling")) rest = rest.filter((t) => t !== "scheduling");
      if (rest === null || rest.length > 0) executorWakeUp(h, rest);
      if (!h.executor.isSleeping) h.resumeScheduler();
      return null;
    },
  },
  reset_prefix_cache: {
    owner: "EngineCore",
    params: [opt("reset_running_requests"), opt("reset_connector")],
    // KV blocks held by running requests make the reset fail unless they are preempted first.
    run: (h, [resetRunning = false]) => truthy(resetRunning) || h.numRunning() === 0,
  },
  reset_mm_cache: { owner: "EngineCore", params: [], run: () => null },
  reset_encoder_cache: { owner: "EngineCore", params: [], run: () => null },
  profile: {
    owner: "EngineCore",
    params: [opt("is_start"), opt("profile_prefix")],
    run: (h, [isStart = true]) => {
      h.executor.profiling = truthy(isStart);
      return null;
    },
  },
  add_lora: {
    owner: "EngineCore",
    params: [req("lora_request")],
    run: (h, [raw]) => {
      const lora = convertLoRARequest(raw);
      if (h.executor.loras.has(lora.loraIntId) && !lora.loadInplace) return false;
      h.executor.loras.set(lora.loraIntId, {
        loraName: lora.loraName,
        loraIntId: lora.loraIntId,
        loraPath: lora.loraPath,
      });
      return true;
    },
  },
  remove_lora: {
    owner: "EngineCore",
    params: [req("lora_id")],
    run: (h, [raw]) => {
      const id = loraIdArg(raw);
      h.executor.pinned.delete(id);
      return h.executor.loras.delete(id);
    },
  },
  list_loras: { owner: "EngineCore", params: [], run: (h) => [...h.executor.loras.keys()] },
  pin_lora: {
    owner: "EngineCore",
    params: [req("lora_id")],
    run: (h, [raw]) => {
      const id = loraIdArg(raw);
      if (!h.executor.loras.has(id)) throw new PyError(`Pinning failed. LoRA ${id} is not registered.`);
      h.executor.pinned.add(id);
      return true;
    },
  },
  pause_scheduler: {
    owner: "EngineCoreProc",
    params: [opt("mode"), opt("clear_cache")],
    run: (h, [mode = "abort", clearCache = true]) => {
      const pause = h.pauseScheduler(pauseMode(mode), truthy(clearCache));
      return pause ? pause.then(() => null) : null;
    },
  },
  resume_scheduler: {
    owner: "EngineCore",
    params: [],
    run: (h) => {
      h.resumeScheduler();
      return null;
    },
  },
  is_scheduler_paused: { owner: "EngineCore", params: [], run: (h) => h.isSchedulerPaused() },
  collective_rpc: {
    owner: "EngineCore",
    params: [req("method"), opt("timeout"), opt("args"), opt("kwargs")],
    run: (h, [method, _timeout = null, args = [], kwargs = null]) => {
      const list = Array.isArray(args) ? args : [];
      return Array.from({ length: h.worldSize }, (_, rank) => workerMethod(rank, method, list, kwargs));
    },
  },
  execute_dummy_batch: { owner: "EngineCore", params: [], run: () => null },
  set_weight_version: {
    owner: "EngineCore",
    params: [req("weight_version")],
    run: (h, [version]) => {
      h.executor.weightVersion = version as string;
      return null;
    },
  },
  get_weight_version: { owner: "EngineCore", params: [], run: (h) => h.executor.weightVersion },
  // Mock-only helpers (not methods of vLLM's EngineCore): echo returns its arguments, engine_index the
  // index of the engine that answered (lets tests tell engines apart).
  echo: { owner: "MockEngineCore", params: "variadic", run: (_h, args) => args },
  engine_index: { owner: "MockEngineCore", params: [], run: (h) => h.engineIndex },
};

export const UTILITY_METHODS: readonly string[] = Object.keys(METHODS);

function checkArity(name: string, method: UtilityMethod, args: unknown[]): void {
  if (method.params === "variadic") return;
  // vLLM's _convert_msgspec_args asserts len(args) <= number of parameters (an AssertionError without text).
  if (args.length > 0 && args.length > method.params.length) throw new PyError("");
  const missing = method.params.slice(args.length).filter((p) => p.required);
  if (missing.length > 0) {
    const names = missing.map((p) => `'${p.name}'`);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
    const plural = missing.length === 1 ? "argument" : "arguments";
    throw new PyError(
      `${method.owner}.${name}() missing ${missing.length} required positional ${plural}: ${list}`,
    );
  }
}

function failure(name: string, error: unknown): UtilityOutcome {
  const text = error instanceof Error ? error.message : String(error);
  return { ok: false, failureMessage: `Call to ${name} method failed: ${text}` };
}

/**
 * Runs a utility call. Returns the outcome at once, or a promise for methods whose reply vLLM defers
 * (sleep / pause_scheduler while requests still have to drain).
 */
export function invokeUtility(
  host: UtilityHost,
  name: string,
  args: unknown[],
): UtilityOutcome | Promise<UtilityOutcome> {
  const method = Object.hasOwn(METHODS, name) ? METHODS[name] : undefined;
  if (!method) return failure(name, new PyError(`'EngineCoreProc' object has no attribute '${name}'`));
  try {
    checkArity(name, method, args);
    const value = method.run(host, args);
    if (value instanceof Promise) {
      return value.then(
        (v): UtilityOutcome => ({ ok: true, value: v }),
        (e: unknown) => failure(name, e),
      );
    }
    return { ok: true, value };
  } catch (error) {
    if (!(error instanceof PyError)) throw error;
    return failure(name, error);
  }
}
