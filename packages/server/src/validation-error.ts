// A body the route schema refuses → vLLM's 400, as its `validation_exception_handler`
// (vllm/entrypoints/serve/utils/server_utils.py) writes a FastAPI RequestValidationError: type "Bad Request",
// param the first error's location joined with dots ("body.temperature", pydantic's union-member markers
// such as "str" or "list[str]" left out: `clean_loc_for_param`), message "N validation error(s):" and one
// line per error, the Python repr of the error dict FastAPI lists.
import type { FastifySchemaValidationError } from "fastify/types/schema.js";
import { OpenAIApiError } from "./errors.js";
import { type LaxErrorParams, type PyError, PyLiteral } from "./lax.js";

/** vLLM's `_INTERNAL_LOC_MARKERS` (the ones our schemas can produce) and bracketed segments. */
const INTERNAL_SEGMENTS = new Set(["str", "int", "float", "bool", "list", "dict", "none", "union"]);
function isInternal(segment: string): boolean {
  return /[[\]{}()]/.test(segment) || INTERNAL_SEGMENTS.has(segment.toLowerCase());
}

export function paramOfLoc(loc: readonly (string | number)[]): string {
  const parts = loc.map(String).filter((p) => !isInternal(p));
  return (parts.length === 0 ? loc.map(String) : parts).join(".");
}

/** Python's repr() of a JSON value (str quoting as CPython chooses it, True/False/None, dicts, lists). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value instanceof PyLiteral) return value.text;
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return String(value);
  }
  if (typeof value === "string") return pyStr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `${pyStr(k)}: ${pyRepr(v)}`,
    );
    return `{${entries.join(", ")}}`;
  }
  return pyStr(String(value));
}

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}

function pyTuple(items: readonly (string | number)[]): string {
  return items.length === 1 ? `(${pyRepr(items[0])},)` : `(${items.map(pyRepr).join(", ")})`;
}

function pyErrorLine(e: PyError): string {
  let line = `{'type': ${pyRepr(e.type)}, 'loc': ${pyTuple(e.loc)}, 'msg': ${pyRepr(e.msg)}, 'input': ${pyRepr(e.input)}`;
  if (e.ctx) line += `, 'ctx': ${pyRepr(e.ctx)}`;
  return `${line}}`;
}

/** The 400 for a list of pydantic-shaped errors (loc starting with "body"). */
export function validationError(errors: readonly PyError[]): OpenAIApiError {
  const label = errors.length === 1 ? "error" : "errors";
  const message =
    errors.length === 0
      ? "Validation error"
      : `${errors.length} validation ${label}:\n${errors.map((e) => `  ${pyErrorLine(e)}`).join("\n")}`;
  const first = errors[0];
  return new OpenAIApiError(400, "Bad Request", message, first ? paramOfLoc(first.loc) : null);
}

function pathSegments(instancePath: string): (string | number)[] {
  if (instancePath === "") return [];
  return instancePath
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** ajv's errors for a body (our `lax` keyword, `required`) as the errors pydantic lists. */
export function pyErrorsOfAjv(errors: readonly FastifySchemaValidationError[]): PyError[] {
  const out: PyError[] = [];
  for (const e of errors) {
    const at = ["body", ...pathSegments(e.instancePath)];
    const data = (e as { data?: unknown }).data;
    if (e.keyword === "lax") {
      const py = (e.params as unknown as LaxErrorParams).pyError;
      out.push({ ...py, loc: [...at, ...py.loc] });
    } else if (e.keyword === "required") {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      out.push({ type: "missing", loc: [...at, missing], msg: "Field required", input: data });
    } else {
      out.push({ type: e.keyword, loc: at, msg: e.message ?? "invalid", input: data });
    }
  }
  return out;
}

/** A body that is not JSON: pydantic's json_invalid, located at the character where parsing failed. */
export function jsonInvalid(error: Error): OpenAIApiError {
  const position = /position (\d+)/.exec(error.message);
  return validationError([
    {
      type: "json_invalid",
      loc: ["body", position ? Number(position[1]) : 0],
      msg: "JSON decode error",
      input: {},
      ctx: { error: error.message },
    },
  ]);
}
