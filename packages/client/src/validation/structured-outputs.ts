// StructuredOutputsParams (a pydantic dataclass in vllm/sampling_params.py): msgspec decodes it as a
// dataclass — field types checked, then __post_init__ — while decoding SamplingParams.
// The codec writes all 11 fields; undefined takes the default.
import type { Checker } from "./checker.js";
import { any, bool, entries, list, nullable, str, structObject, wireTypeName } from "./msgspec-types.js";

/** The constraint fields __post_init__ counts (`is not None`: json_object=False and choice=[] count). */
const KINDS = ["json", "regex", "choice", "grammar", "jsonObject", "structuralTag"] as const;

/** `dict` (untyped): a Map or plain object; its keys must be hashable, values anything encodable. */
export function untypedDict(c: Checker, field: string, v: unknown): void {
  if (v instanceof Map) {
    any(c, field, v);
    return;
  }
  for (const [k, x] of entries(c, field, v)) any(c, `${field}[${JSON.stringify(k)}]`, x);
}

export function verifyStructuredOutputsParams(c: Checker, at: string, value: unknown): void {
  const so = structObject(c, at, value, "object");
  const f = (key: string) => `${at}.${key}`;
  const s = (key: string) => nullable(so[key], (v) => str(c, f(key), v));
  const b = (key: string) => so[key] === undefined || bool(c, f(key), so[key]);
  // json: str | dict | None
  nullable(so.json, (v) => {
    if (typeof v === "string") return;
    if (Array.isArray(v) || typeof v !== "object") {
      c.fail("msgspec.union", f("json"), v, `Expected \`str | object\`, got \`${wireTypeName(v)}\``);
    }
    untypedDict(c, f("json"), v);
  });
  s("regex");
  nullable(so.choice, (v) => list(c, f("choice"), v, (path, x) => str(c, path, x)));
  s("grammar");
  nullable(so.jsonObject, (v) => bool(c, f("jsonObject"), v));
  b("disableAnyWhitespace");
  b("disableAdditionalProperties");
  s("whitespacePattern");
  s("structuralTag");
  s("backend"); // _backend
  b("backendWasAuto"); // _backend_was_auto

  // __post_init__: exactly one kind of constraint.
  const set = KINDS.filter((k) => so[k] !== null && so[k] !== undefined);
  c.require(
    set.length <= 1,
    "StructuredOutputsParams.kinds.multiple",
    at,
    `{${set.join(", ")}}`,
    `only one kind of structured outputs constraint may be set, got ${set.join(", ")}`,
  );
  c.require(set.length >= 1, "StructuredOutputsParams.kinds.none", at, value);
}
