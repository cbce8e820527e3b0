// vllm/pooling_params.py PoolingParams and LateInteractionParams (array_like msgspec Structs); the task
// is vllm/tasks.py's PoolingTask Literal. PoolingParams.__post_init__ runs on decode.

import { type DecodeRules, PIN_DECODE_RULES } from "../versions.js";
import {
  decodeArrayStruct,
  decodeBool,
  decodeInt,
  decodeList,
  decodeMember,
  decodeStr,
  decodeStrAnyDict,
  type FieldSpec,
  nullable,
} from "./msgspec.js";
import { vllmValidationError } from "./python-errors.js";
import { decodeRequestOutputKind, postInit } from "./sampling-params.js";

const POOLING_TASKS = [
  "embed",
  "classify",
  "token_embed",
  "token_classify",
  "plugin",
  "embed&token_classify",
];
const FINAL_ONLY = 2;

/** vllm/tasks.py _REMOVED_POOLING_TASK_MESSAGES */
const REMOVED_POOLING_TASKS: Record<string, string> = {
  score: "`score` task was removed; use `classify` instead.",
  encode: "`encode` task was removed; use `token_embed` or `token_classify` instead.",
};

const LATE_INTERACTION_FIELDS: FieldSpec[] = [
  { name: "mode", decode: decodeStr },
  { name: "query_key", decode: decodeStr },
  { name: "query_uses", decode: nullable(decodeInt), default: () => null },
];

const FIELDS: FieldSpec[] = [
  { name: "use_activation", decode: nullable(decodeBool), default: () => null },
  { name: "dimensions", decode: nullable(decodeInt), default: () => null },
  { name: "step_tag_id", decode: nullable(decodeInt), default: () => null },
  {
    name: "returned_token_ids",
    decode: nullable((v, p) => decodeList(v, p, decodeInt)),
    default: () => null,
  },
  { name: "task", decode: nullable((v, p) => decodeMember(v, p, "str", POOLING_TASKS)), default: () => null },
  { name: "requires_token_ids", decode: decodeBool, default: () => false },
  { name: "skip_reading_prefix_cache", decode: nullable(decodeBool), default: () => null },
  {
    name: "late_interaction_params",
    decode: nullable((v, p) => decodeArrayStruct(v, p, LATE_INTERACTION_FIELDS)),
    default: () => null,
  },
  { name: "extra_kwargs", decode: nullable(decodeStrAnyDict), default: () => null },
  { name: "output_kind", decode: decodeRequestOutputKind, default: () => FINAL_ONLY },
];

/** vllm/tasks.py check_removed_pooling_task */
function checkRemovedPoolingTask(task: unknown): void {
  if (typeof task === "string" && Object.hasOwn(REMOVED_POOLING_TASKS, task)) {
    throw vllmValidationError(REMOVED_POOLING_TASKS[task]!, { parameter: "task" });
  }
}

function poolingParamsPostInit(self: Record<string, unknown>): void {
  checkRemovedPoolingTask(self.task);
  if (self.output_kind !== FINAL_ONLY) {
    const name = ["CUMULATIVE", "DELTA", "FINAL_ONLY"][self.output_kind as number];
    throw vllmValidationError(
      `For pooling output_kind has to be FINAL_ONLY, got <RequestOutputKind.${name}: ${self.output_kind}>`,
    );
  }
}

export function decodePoolingParams(
  v: unknown,
  path: string,
  rules: DecodeRules = PIN_DECODE_RULES,
): Record<string, unknown> {
  const self = decodeArrayStruct(v, path, FIELDS);
  // Up to v0.25 __post_init__ raises ValueError (msgspec wraps it); check_removed_pooling_task is main's
  // (e6d1310b, #48984) but unreachable: the PoolingTask Literal already rejects those names.
  postInit(rules, path, () => poolingParamsPostInit(self));
  return self;
}
