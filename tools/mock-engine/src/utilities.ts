// Utility (RPC) methods of the mock engine, declared with the signatures of vLLM's EngineCore /
// EngineCoreProc methods at c67fe497 (vllm/v1/engine/core.py; the same signatures at v0.22.1–v0.25.1,
// which lack get_weight_version / set_weight_version), and run the way vLLM runs them
// (EngineCoreProc._handle_client_request, UTILITY branch):
//   method = getattr(self, method_name)                  → AttributeError for an unknown name
//   method(*self._convert_msgspec_args(method, args))
// where _convert_msgspec_args returns empty args unchanged, asserts len(args) <= number of parameters
// (an AssertionError without text), and converts an argument with msgspec.convert(arg, annotation) only
// where the parameter's annotation is a msgspec.Struct class: LoRARequest (array_like) for add_lora. Every
// other argument reaches the method as the builtin the generic decoder produced, so ints, literals and
// lists are not checked by msgspec; the method body fails on them the way Python would (e.g. `level >= 1`
// on a str, `Invalid pause mode: ...`). A missing required argument is Python's TypeError. The failure
// reply is `Call to <method> method failed: <str(exception)>` (EngineCoreProc._invoke_utility_method).
import {
  type ArrayLikeStruct,
  isStructType,
  msgspecConvert,
  orNone,
  PostInitError,
} from "./msgspec-convert.js";
import {
  PyError,
  pyCompareWithInt,
  pyContainsStr,
  pyIterate,
  pyKind,
  pyNumber,
  pyStr,
  pyTruthy,
} from "./python-values.js";
import { engineHasUtility, type MockVllmVersion, partialWakeKeepsSchedulerPaused } from "./versions.js";

/** The engine-side state and actions the utilities need. */
export interface UtilityHost {
  readonly engineIndex: number;
  /** The vLLM the engine plays: which methods exist, and wake_up's pre-v0.24 semantics. */
  readonly vllmVersion: MockVllmVersion;
  readonly worldSize: number;
  readonly executor: ExecutorState;
  numRunning(): number;
  /** Empties the prefix cache (reset_prefix_cache, pause_scheduler with clear_cache). */
  resetPrefixCache(): void;
  /** Returns undefined when the pause completed at once, or a promise that settles when the engine is idle. */
  pauseScheduler(mode: "abort" | "wait" | "keep", clearCache: boolean): Promise<void> | undefined;
  resumeScheduler(): void;
  isSchedulerPaused(): boolean;
}

export interface MockLoRA {
  loraName: string;
  loraIntId: number | bigint;
  loraPath: string;
}

/** What vLLM keeps in the model executor (sleep state, LoRA adapters, profiler, weight version). */
export class ExecutorState {
  isSleeping = false;
  sleepingTags = new Set<string>();
  readonly loras = new Map<number | bigint, MockLoRA>();
  readonly pinned = new Set<number | bigint>();
  profiling = false;
  weightVersion: unknown = "default";
  /** save_sharded_state calls: [path, pattern, max_size]. */
  readonly savedShardedStates: unknown[][] = [];
}

export type UtilityOutcome = { ok: true; value: unknown } | { ok: false; failureMessage: string };

/** The LoRARequest struct of vllm/lora/request.py (msgspec.Struct, omit_defaults=True, array_like=True). */
export const LORA_REQUEST: ArrayLikeStruct = {
  struct: "LoRARequest",
  fields: [
    { name: "lora_name", type: "str" },
    { name: "lora_int_id", type: "int" },
    { name: "lora_path", type: "str", default: () => "" },
    { name: "base_model_name", type: orNone("str"), default: () => null },
    { name: "tensorizer_config_dict", type: orNone("dict"), default: () => null },
    { name: "load_inplace", type: "bool", default: () => false },
    { name: "is_3d_lora_weight", type: "bool", default: () => false },
  ],
  // LoRARequest.__post_init__: a ValueError for the id, an assert for the path.
  postInit(v) {
    if ((v.lora_int_id as number | bigint) < 1)
      throw new PostInitError(`id must be > 0, got ${v.lora_int_id}`);
    if (!pyTruthy(v.lora_path)) throw new PyError("lora_path cannot be empty");
  },
};

/**
 * One positional parameter after `self`: its annotation (a Struct is converted; a string is the Python
 * annotation, documentation only) and its default (absent: required).
 */
interface Param {
  readonly name: string;
  readonly annotation: string | ArrayLikeStruct;
  readonly hasDefault: boolean;
  readonly default?: unknown;
}

const param = (name: string, annotation: string | ArrayLikeStruct, ...dflt: [] | [unknown]): Param =>
  dflt.length === 0
    ? { name, annotation, hasDefault: false }
    : { name, annotation, hasDefault: true, default: dflt[0] };

interface UtilityMethod {
  /** Class whose qualname Python prints in TypeErrors (the class that defines the method). */
  readonly owner: "EngineCore" | "EngineCoreProc" | "MockEngineCore";
  /** Positional parameters after self; "variadic" accepts any number (like *args). */
  readonly params: readonly Param[] | "variadic";
  /** Gets every parameter, defaults filled in. */
  run(host: UtilityHost, args: unknown[]): unknown;
}

const PAUSE_MODES = ["keep", "abort", "wait"];

/** EngineCoreProc.pause_scheduler's check: `if mode not in ("keep", "abort", "wait"): raise ValueError`. */
function pauseMode(value: unknown): "abort" | "wait" | "keep" {
  if (typeof value === "string" && PAUSE_MODES.includes(value)) return value as "abort" | "wait" | "keep";
  throw new PyError(`Invalid pause mode: ${pyStr(value)}`);
}

/** Executor.remove_lora / pin_lora: `assert lora_id > 0, "lora_id must be greater than 0."`. */
function loraIdArg(value: unknown): number | bigint {
  if (!pyCompareWithInt(value, ">", 0, raise)) throw new PyError("lora_id must be greater than 0.");
  return typeof value === "bigint" ? value : (pyNumber(value) as number);
}

function raise(message: string): never {
  throw new PyError(message);
}

/** Executor.sleep (vllm/v1/executor/abstract.py). */
function executorSleep(host: UtilityHost): void {
  const ex = host.executor;
  if (ex.isSleeping) return; // "Executor is already sleeping."
  ex.sleepingTags = new Set(["weights", "kv_cache"]);
  ex.isSleeping = true;
}

/** Executor.wake_up (vllm/v1/executor/abstract.py): unknown tags make it warn and return. */
function executorWakeUp(host: UtilityHost, tags: unknown): void {
  const ex = host.executor;
  if (!ex.isSleeping) return; // "Executor is not sleeping."
  if (pyTruthy(tags)) {
    const list = pyIterate(tags);
    for (const tag of list) if (typeof tag !== "string" || !ex.sleepingTags.has(tag)) return;
    for (const tag of list) ex.sleepingTags.delete(tag as string);
  } else {
    ex.sleepingTags.clear();
  }
  if (ex.sleepingTags.size === 0) ex.isSleeping = false;
}

/** Methods of the mock workers reachable through collective_rpc (vLLM's run_method on each worker). */
function workerMethod(rank: number, method: unknown, args: unknown[]): unknown {
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
  // get_supported_tasks(self) -> tuple[SupportedTask, ...]
  get_supported_tasks: { owner: "EngineCore", params: [], run: () => ["generate"] },
  // is_sleeping(self) -> bool: scheduler paused or executor asleep.
  is_sleeping: {
    owner: "EngineCore",
    params: [],
    run: (h) => h.isSchedulerPaused() || h.executor.isSleeping,
  },
  // sleep(self, level: int = 1, mode: PauseMode = "abort") -> None | Future
  sleep: {
    owner: "EngineCore",
    params: [param("level", "int", 1), param("mode", "PauseMode", "abort")],
    run: (h, [level, mode]) => {
      const clearPrefixCache = pyCompareWithInt(level, ">=", 1, raise);
      const pause = h.pauseScheduler(pauseMode(mode), clearPrefixCache);
      if (pyCompareWithInt(level, "<", 1, raise)) return pause ? pause.then(() => null) : null;
      if (!pause) {
        executorSleep(h);
        return null;
      }
      return pause.then(() => {
        executorSleep(h);
        return null;
      });
    },
  },
  // wake_up(self, tags: list[str] | None = None). From v0.24 the scheduler resumes only once the
  // executor is fully awake (`if not self.model_executor.is_sleeping`, 93ec6458 #44483); v0.22.1 and
  // v0.23.0 resume it after every wake_up, partial or not.
  wake_up: {
    owner: "EngineCore",
    params: [param("tags", "list[str] | None", null)],
    run: (h, [tags]) => {
      let rest = tags;
      if (rest !== null && pyContainsStr(rest, "scheduling")) {
        rest = pyIterate(rest).filter((t) => t !== "scheduling");
      }
      if (rest === null || pyTruthy(rest)) executorWakeUp(h, rest);
      if (!h.executor.isSleeping || !partialWakeKeepsSchedulerPaused(h.vllmVersion)) h.resumeScheduler();
      return null;
    },
  },
  // reset_prefix_cache(self, reset_running_requests: bool = False, reset_connector: bool = False) -> bool
  reset_prefix_cache: {
    owner: "EngineCore",
    params: [param("reset_running_requests", "bool", false), param("reset_connector", "bool", false)],
    // KV blocks held by running requests make the reset fail unless they are preempted first.
    run: (h, [resetRunning]) => {
      if (!pyTruthy(resetRunning) && h.numRunning() > 0) return false;
      h.resetPrefixCache();
      return true;
    },
  },
  reset_mm_cache: { owner: "EngineCore", params: [], run: () => null },
  reset_encoder_cache: { owner: "EngineCore", params: [], run: () => null },
  // profile(self, is_start: bool = True, profile_prefix: str | None = None)
  profile: {
    owner: "EngineCore",
    params: [param("is_start", "bool", true), param("profile_prefix", "str | None", null)],
    run: (h, [isStart]) => {
      h.executor.profiling = pyTruthy(isStart);
      return null;
    },
  },
  // add_lora(self, lora_request: LoRARequest) -> bool — the one Struct-typed utility parameter.
  add_lora: {
    owner: "EngineCore",
    params: [param("lora_request", LORA_REQUEST)],
    run: (h, [converted]) => {
      const lora = converted as Record<string, unknown>;
      const id = lora.lora_int_id as number | bigint;
      // LRUCacheWorkerLoRAManager.add_adapter: an id already loaded is kept unless load_inplace.
      if (h.executor.loras.has(id) && !lora.load_inplace) return false;
      h.executor.loras.set(id, {
        loraName: lora.lora_name as string,
        loraIntId: id,
        loraPath: lora.lora_path as string,
      });
      return true;
    },
  },
  // remove_lora(self, lora_id: int) -> bool
  remove_lora: {
    owner: "EngineCore",
    params: [param("lora_id", "int")],
    run: (h, [raw]) => {
      const id = loraIdArg(raw);
      h.executor.pinned.delete(id);
      return h.executor.loras.delete(id);
    },
  },
  // list_loras(self) -> set[int] (a set travels as an array)
  list_loras: {
    owner: "EngineCore",
    params: [],
    run: (h) => [...h.executor.loras.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  },
  // pin_lora(self, lora_id: int) -> bool
  pin_lora: {
    owner: "EngineCore",
    params: [param("lora_id", "int")],
    run: (h, [raw]) => {
      const id = loraIdArg(raw);
      if (!h.executor.loras.has(id)) throw new PyError(`Pinning failed. LoRA ${id} is not registered.`);
      h.executor.pinned.add(id);
      return true;
    },
  },
  // save_sharded_state(self, path: str, pattern: str | None = None, max_size: int | None = None) -> None
  save_sharded_state: {
    owner: "EngineCore",
    params: [
      param("path", "str"),
      param("pattern", "str | None", null),
      param("max_size", "int | None", null),
    ],
    run: (h, [path, pattern, maxSize]) => {
      // ShardedStateLoader.save_model joins the path with os.path.join: a non-str path is a TypeError.
      if (typeof path !== "string")
        throw new PyError(`expected str, bytes or os.PathLike object, not ${pyKind(path)}`);
      h.executor.savedShardedStates.push([path, pattern, maxSize]);
      return null;
    },
  },
  // EngineCoreProc.pause_scheduler(self, mode: PauseMode = "abort", clear_cache: bool = True) -> Future | None
  pause_scheduler: {
    owner: "EngineCoreProc",
    params: [param("mode", "PauseMode", "abort"), param("clear_cache", "bool", true)],
    run: (h, [mode, clearCache]) => {
      const pause = h.pauseScheduler(pauseMode(mode), pyTruthy(clearCache));
      return pause ? pause.then(() => null) : null;
    },
  },
  // resume_scheduler(self) -> None
  resume_scheduler: {
    owner: "EngineCore",
    params: [],
    run: (h) => {
      h.resumeScheduler();
      return null;
    },
  },
  // is_scheduler_paused(self) -> bool
  is_scheduler_paused: { owner: "EngineCore", params: [], run: (h) => h.isSchedulerPaused() },
  // collective_rpc(self, method: str | Callable, timeout: float | None = None, args: tuple = (),
  //                kwargs: dict[str, Any] | None = None) -> list
  collective_rpc: {
    owner: "EngineCore",
    params: [
      param("method", "str | Callable[..., _R]"),
      param("timeout", "float | None", null),
      param("args", "tuple", []),
      param("kwargs", "dict[str, Any] | None", null),
    ],
    run: (h, [method, _timeout, args]) => {
      const list = pyIterate(args);
      return Array.from({ length: h.worldSize }, (_, rank) => workerMethod(rank, method, list));
    },
  },
  execute_dummy_batch: { owner: "EngineCore", params: [], run: () => null },
  // set_weight_version(self, weight_version: str) -> None (stored as given). This and
  // get_weight_version exist at main only (9069a571, #49040): invokeUtility checks the version.
  set_weight_version: {
    owner: "EngineCore",
    params: [param("weight_version", "str")],
    run: (h, [version]) => {
      h.executor.weightVersion = version;
      return null;
    },
  },
  // get_weight_version(self) -> str
  get_weight_version: { owner: "EngineCore", params: [], run: (h) => h.executor.weightVersion },
  // Mock-only helpers (not methods of vLLM's EngineCore): echo returns its arguments, engine_index the
  // index of the engine that answered (lets tests tell engines apart).
  echo: { owner: "MockEngineCore", params: "variadic", run: (_h, args) => args },
  engine_index: { owner: "MockEngineCore", params: [], run: (h) => h.engineIndex },
};

export const UTILITY_METHODS: readonly string[] = Object.keys(METHODS);

/** EngineCoreProc._convert_msgspec_args. */
function convertArgs(params: readonly Param[], args: unknown[]): unknown[] {
  if (args.length === 0) return args;
  if (args.length > params.length) throw new PyError(""); // assert len(args) <= len(arg_types)
  return args.map((value, i) => {
    const { annotation } = params[i]!;
    return isStructType(annotation) ? msgspecConvert(value, annotation) : value;
  });
}

/** Python binding `method(*args)`: defaults fill the rest; a required parameter left out is a TypeError. */
function bindArgs(name: string, method: UtilityMethod, params: readonly Param[], args: unknown[]): unknown[] {
  const missing = params.slice(args.length).filter((p) => !p.hasDefault);
  if (missing.length > 0) {
    const names = missing.map((p) => `'${p.name}'`);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
    const plural = missing.length === 1 ? "argument" : "arguments";
    throw new PyError(
      `${method.owner}.${name}() missing ${missing.length} required positional ${plural}: ${list}`,
    );
  }
  return params.map((p, i) => (i < args.length ? args[i] : p.default));
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
  // getattr(self, method_name) in EngineCoreProc._handle_client_request, inside the try of
  // _invoke_utility_method: a name the engine's version lacks is an AttributeError reply.
  const method =
    Object.hasOwn(METHODS, name) && engineHasUtility(host.vllmVersion, name) ? METHODS[name] : undefined;
  if (!method) return failure(name, new PyError(`'EngineCoreProc' object has no attribute '${name}'`));
  try {
    const bound =
      method.params === "variadic"
        ? args
        : bindArgs(name, method, method.params, convertArgs(method.params, args));
    const value = method.run(host, bound);
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
