// Small text helpers the parsers share (vllm/tool_parsers/utils.py).

/** Length of the longest proper prefix of `tag` that is a suffix of `text` (vLLM's `partial_tag_overlap`). */
export function partialTagOverlap(text: string, tag: string): number {
  // Runs on every streamed delta: compares characters in place rather than slicing candidates.
  const max = Math.min(tag.length - 1, text.length);
  const last = text.charCodeAt(text.length - 1);
  for (let k = max; k > 0; k--) {
    if (tag.charCodeAt(k - 1) !== last) continue;
    let j = 0;
    const base = text.length - k;
    while (j < k - 1 && text.charCodeAt(base + j) === tag.charCodeAt(j)) j++;
    if (j === k - 1) return k;
  }
  return 0;
}

/** vLLM's `is_complete_json`: the text parses as one JSON value. */
export function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * `json.dumps(value, ensure_ascii=False)` as Python writes it: ", " and ": " separators, non-ASCII kept.
 * vLLM serializes parsed arguments this way, so `function.arguments` matches vLLM's byte for byte (except
 * floats with a zero fraction, which JSON.parse turns into integers: Python keeps `1.0`, this writes `1`).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`).join(", ")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) {
    return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  }
  return JSON.stringify(value);
}

/** vLLM's `random_uuid()` at the pin: 16 hex digits (the low 64 bits of a uuid4). */
export function randomUuid16(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** vLLM's `make_tool_call_id()` (vllm/entrypoints/chat_utils.py): `chatcmpl-tool-<16 hex>`, or Kimi's form. */
export function makeToolCallId(
  idType: "random" | "kimi_k2" = "random",
  name?: string,
  index?: number,
): string {
  if (idType === "kimi_k2") return `functions.${name}:${index}`;
  return `chatcmpl-tool-${randomUuid16()}`;
}
