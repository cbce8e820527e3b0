// The JSON-schema checks vLLM's `auto` structured-outputs mode runs before it picks a backend:
// `has_xgrammar_unsupported_json_features` (vllm/v1/structured_output/backend_xgrammar.py) and
// `has_guidance_unsupported_json_features` (backend_guidance.py), plus the schema's `pattern` regexes,
// which `xgr.Grammar.from_json_schema` converts with the same regex converter as a regex request.
import { xgrammarRegexError } from "./regex-support.js";

/** vLLM's STRING_SUPPORTED_FORMATS: the string `format`s xgrammar implements. */
const XGRAMMAR_STRING_FORMATS = new Set([
  "email",
  "date",
  "time",
  "date-time",
  "duration",
  "ipv4",
  "ipv6",
  "hostname",
  "uuid",
  "uri",
  "uri-reference",
  "uri-template",
]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** True when `check` holds for `schema` or any object nested in it (values and list items, like vLLM's walk). */
function anyObject(schema: unknown, check: (obj: Json) => boolean): boolean {
  if (!isObject(schema)) return false;
  if (check(schema)) return true;
  for (const value of Object.values(schema)) {
    if (isObject(value)) {
      if (anyObject(value, check)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) if (isObject(item) && anyObject(item, check)) return true;
    }
  }
  return false;
}

/** vLLM's `has_xgrammar_unsupported_json_features`. */
export function hasXgrammarUnsupportedJsonFeatures(schema: unknown): boolean {
  return anyObject(schema, (obj) => {
    const type = obj.type;
    if ((type === "integer" || type === "number") && "multipleOf" in obj) return true;
    if (
      type === "array" &&
      ["uniqueItems", "contains", "minContains", "maxContains"].some((key) => key in obj)
    ) {
      return true;
    }
    if (type === "string" && "format" in obj && !XGRAMMAR_STRING_FORMATS.has(obj.format as string)) {
      return true;
    }
    return type === "object" && ("patternProperties" in obj || "propertyNames" in obj);
  });
}

/** A string `pattern` in the schema that xgrammar's regex converter refuses (from_json_schema fails). */
export function xgrammarSchemaPatternError(schema: unknown): string | null {
  let error: string | null = null;
  anyObject(schema, (obj) => {
    if (typeof obj.pattern === "string") error = xgrammarRegexError(obj.pattern);
    return error !== null;
  });
  return error;
}

/** vLLM's `has_guidance_unsupported_json_features`: llguidance has no `patternProperties`. */
export function hasGuidanceUnsupportedJsonFeatures(schema: unknown): boolean {
  return anyObject(schema, (obj) => "patternProperties" in obj);
}
