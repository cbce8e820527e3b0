// Carries the request id and the rules in force; turns a broken rule into an InvalidRequestError that
// names the field, the value and the rule (with the vLLM file and function that enforce it, and the
// first vLLM version that does when not every version does).
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import { InvalidRequestError } from "../errors.js";
import { PIN_VERSION, REQUEST_RULES, rulesFor, type VllmVersion } from "./rules.js";

export class Checker {
  readonly #active: ReadonlySet<string>;
  readonly #versions: readonly VllmVersion[];

  /** `versions`: the vLLM versions the request may meet; the rules of every one of them apply. */
  constructor(
    readonly requestId: string | undefined,
    versions: readonly VllmVersion[] = [PIN_VERSION],
  ) {
    this.#active = rulesFor(versions);
    this.#versions = versions;
  }

  /** Whether rule `id` is in force for the engine's version. */
  applies(id: string): boolean {
    return this.#active.has(id);
  }

  /** Throws the InvalidRequestError for rule `id` at `field` (detail defaults to the rule's text). */
  fail(id: string, field: string, value: unknown, detail?: string): never {
    const rule = REQUEST_RULES.get(id);
    if (rule === undefined) throw new Error(`unknown request rule ${id}`);
    throw new InvalidRequestError({
      requestId: this.requestId,
      field,
      detail: detail ?? rule.text,
      value: value === MISSING ? undefined : renderValue(value),
      rule: {
        id: rule.id,
        stage: rule.stage,
        text: rule.text,
        source: rule.source,
        ...(rule.since === undefined ? {} : { since: rule.since }),
      },
      vllmVersions: this.#versions,
    });
  }

  /** Fails rule `id` unless `ok` (a rule not in force for this version never fails). */
  require(ok: boolean, id: string, field: string, value: unknown, detail?: string): void {
    if (!ok && this.applies(id)) this.fail(id, field, value, detail);
  }
}

/** Passed as the value when the field is absent. */
export const MISSING: unique symbol = Symbol("missing");

/** Short text for a value in an error message. */
export function renderValue(v: unknown, depth = 0): string {
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  switch (typeof v) {
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "bigint":
      return `${v}n`;
    case "string":
      return JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
    case "boolean":
      return String(v);
    case "function":
      return "a function";
    case "symbol":
      return String(v);
  }
  if (v instanceof Float64) return `Float64(${v.value})`;
  if (v instanceof MsgpackExt) return `MsgpackExt(type ${v.type}, ${v.data.byteLength} bytes)`;
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.byteLength} bytes)`;
  if (depth > 1) return Array.isArray(v) ? "[…]" : "{…}";
  if (Array.isArray(v)) {
    const items = v.slice(0, 5).map((x) => renderValue(x, depth + 1));
    return `[${items.join(", ")}${v.length > 5 ? `, … (${v.length} items)` : ""}]`;
  }
  if (v instanceof Set) return `Set(${v.size})`;
  if (v instanceof Map) return `Map(${v.size})`;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null)
    return `an instance of ${v.constructor?.name ?? "a class"}`;
  const keys = Object.keys(v as object);
  return `{${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", …" : ""}}`;
}
