// Parameter values written as text (XML-style tool calls) coerced to the tool's JSON schema types, after
// vLLM's `extract_types_from_schema` / `coerce_to_schema_type` (vllm/tool_parsers/utils.py).
import type { ToolDefinition } from "./types.js";

const TYPE_ALIASES: Record<string, string> = {
  str: "string",
  text: "string",
  varchar: "string",
  char: "string",
  enum: "string",
  int: "integer",
  int32: "integer",
  int64: "integer",
  uint: "integer",
  uint32: "integer",
  uint64: "integer",
  long: "integer",
  short: "integer",
  unsigned: "integer",
  float: "number",
  float32: "number",
  float64: "number",
  double: "number",
  bool: "boolean",
  dict: "object",
  arr: "array",
  list: "array",
  sequence: "array",
};

/** Every type a schema allows (`type`, `enum` values, anyOf/oneOf/allOf); ["string"] when none is said. */
export function schemaTypes(schema: unknown): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return ["string"];
  const s = schema as Record<string, unknown>;
  const types = new Set<string>();
  if (typeof s.type === "string") types.add(s.type);
  else if (Array.isArray(s.type)) for (const t of s.type) if (typeof t === "string") types.add(t);
  if (Array.isArray(s.enum)) {
    for (const v of s.enum) {
      if (v === null) types.add("null");
      else if (typeof v === "boolean") types.add("boolean");
      else if (typeof v === "number") types.add(Number.isInteger(v) ? "integer" : "number");
      else if (typeof v === "string") types.add("string");
      else if (Array.isArray(v)) types.add("array");
      else if (typeof v === "object") types.add("object");
    }
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(s[key]))
      for (const choice of s[key] as unknown[]) for (const t of schemaTypes(choice)) types.add(t);
  }
  return types.size > 0 ? [...types] : ["string"];
}

function parseJsonFinite(value: string): { ok: true; value: unknown } | { ok: false } {
  try {
    const parsed = JSON.parse(value);
    // JSON.parse cannot produce NaN; 1e999 becomes Infinity, which JSON cannot carry back.
    const finite = JSON.stringify(parsed, (_k, v) => {
      if (typeof v === "number" && !Number.isFinite(v)) throw new Error("non-finite");
      return v;
    });
    return finite === undefined ? { ok: false } : { ok: true, value: parsed };
  } catch {
    return { ok: false };
  }
}

/** `coerce_to_schema_type`: the first type (null, integer, number, boolean, object, array, string) that fits. */
export function coerceToSchemaType(value: string, types: readonly string[]): unknown {
  const wanted = new Set(types.map((t) => TYPE_ALIASES[t.trim().toLowerCase()] ?? t.trim().toLowerCase()));
  for (const type of ["null", "integer", "number", "boolean", "object", "array", "string"]) {
    if (!wanted.has(type)) continue;
    if (type === "null" && value.toLowerCase() === "null") return null;
    if (type === "string") return value;
    if (type === "integer" && /^\s*[-+]?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
    if (type === "number") {
      const n = Number(value.trim());
      if (value.trim() !== "" && Number.isFinite(n)) return n;
    }
    if (type === "boolean") {
      const v = value.toLowerCase().trim();
      if (v === "true" || v === "1") return true;
      if (v === "false" || v === "0") return false;
    }
    if (type === "object" || type === "array") {
      const parsed = parseJsonFinite(value);
      if (parsed.ok) return parsed.value;
    }
  }
  const parsed = parseJsonFinite(value);
  return parsed.ok ? parsed.value : value;
}

/** The `properties` of the named tool's parameters (vLLM's `find_tool_properties`), or {}. */
export function toolProperties(tools: readonly ToolDefinition[], name: string): Record<string, unknown> {
  const tool = tools.find((t) => t.function.name === name);
  const props = (tool?.function.parameters as Record<string, unknown> | undefined)?.properties;
  return typeof props === "object" && props !== null ? (props as Record<string, unknown>) : {};
}
