// JSON text helpers for parsers whose calls are JSON written inline (vLLM uses `json.JSONDecoder().
// raw_decode` and partial_json_parser for the same jobs).
import { Allow, parse as parsePartial } from "partial-json";

/**
 * The end of the first complete JSON value at the start of `text` (after leading whitespace), or -1 when
 * it is not complete yet. Like `raw_decode`, text after the value is ignored; the value is not validated
 * beyond its brackets and strings, so callers parse the slice.
 */
export function jsonValueEnd(text: string): number {
  let i = 0;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  if (i === text.length) return -1;
  const first = text[i];
  if (first !== "{" && first !== "[" && first !== '"') {
    // A scalar: up to the next delimiter; complete only when something follows it.
    const m = /^[^\s,\]}]+/.exec(text.slice(i));
    const end = i + (m?.[0].length ?? 0);
    return end < text.length ? end : -1;
  }
  let depth = 0;
  let inString = false;
  for (; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** `json.JSONDecoder().raw_decode`: the first JSON value and where it ends, or undefined if none parses. */
export function rawDecode(text: string): { value: unknown; end: number } | undefined {
  const end = jsonValueEnd(text);
  if (end === -1) return undefined;
  try {
    return { value: JSON.parse(text.slice(0, end)), end };
  } catch {
    return undefined;
  }
}

/** partial_json_parser.loads: a prefix of JSON completed; strings may be cut unless `strings` is false. */
export function parsePartialJson(text: string, strings = true): unknown {
  return parsePartial(text, strings ? Allow.ALL : Allow.ALL & ~Allow.STR);
}

/** vLLM's `find_common_prefix`. */
export function commonPrefix(a: string, b: string): string {
  let i = 0;
  const n = Math.min(a.length, b.length);
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return a.slice(0, i);
}
