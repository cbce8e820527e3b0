// PoolingParams and LateInteractionParams (vllm/pooling_params.py, array_like msgspec Structs): field
// types (task is the PoolingTask Literal of vllm/tasks.py), then PoolingParams.__post_init__.
import { type Checker, MISSING } from "./checker.js";
import { any, bool, int, list, nullable, str, strMap, structObject } from "./msgspec-types.js";
import { outputKind } from "./sampling-params.js";

/** vllm/tasks.py PoolingTask. */
const POOLING_TASKS = [
  "embed",
  "classify",
  "token_embed",
  "token_classify",
  "plugin",
  "embed&token_classify",
];
/** vllm/tasks.py _REMOVED_POOLING_TASK_MESSAGES. */
const REMOVED_TASKS = ["score", "encode"];
const FINAL_ONLY = 2;

function verifyLateInteractionParams(c: Checker, at: string, value: unknown): void {
  const p = structObject(c, at, value, "array");
  for (const key of ["mode", "queryKey"]) {
    if (p[key] === undefined)
      c.fail("msgspec.required", `${at}.${key}`, MISSING, `Object missing required field \`${key}\``);
    str(c, `${at}.${key}`, p[key]);
  }
  nullable(p.queryUses, (v) => int(c, `${at}.queryUses`, v));
}

export function verifyPoolingParams(c: Checker, at: string, value: unknown): void {
  const p = structObject(c, at, value, "array");
  const f = (key: string) => `${at}.${key}`;
  nullable(p.useActivation, (v) => bool(c, f("useActivation"), v));
  nullable(p.dimensions, (v) => int(c, f("dimensions"), v));
  nullable(p.stepTagId, (v) => int(c, f("stepTagId"), v));
  nullable(p.returnedTokenIds, (v) => list(c, f("returnedTokenIds"), v, (path, x) => int(c, path, x)));
  const task = nullable(p.task, (v) => {
    const t = str(c, f("task"), v);
    // Literal check by msgspec first: a removed task never reaches __post_init__.
    if (!POOLING_TASKS.includes(t))
      c.fail("msgspec.literal", f("task"), t, `Invalid enum value ${JSON.stringify(t)}`);
    return t;
  });
  if (p.requiresTokenIds !== undefined) bool(c, f("requiresTokenIds"), p.requiresTokenIds);
  nullable(p.skipReadingPrefixCache, (v) => bool(c, f("skipReadingPrefixCache"), v));
  nullable(p.lateInteractionParams, (v) => verifyLateInteractionParams(c, f("lateInteractionParams"), v));
  nullable(p.extraKwargs, (v) => strMap(c, f("extraKwargs"), v, (path, x) => any(c, path, x)));
  const kind = p.outputKind === undefined ? FINAL_ONLY : outputKind(c, f("outputKind"), p.outputKind);
  // __post_init__
  c.require(task === null || !REMOVED_TASKS.includes(task), "PoolingParams.task.removed", f("task"), task);
  c.require(kind === FINAL_ONLY, "PoolingParams.output_kind", f("outputKind"), kind);
}
