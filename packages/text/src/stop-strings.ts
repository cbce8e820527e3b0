// Stop strings exactly as vLLM applies them (vllm/v1/engine/detokenizer.py, `check_stop_strings`).
// Python measures strings in code points, JavaScript in UTF-16 units. The search window is equivalent in
// either unit (a well-formed stop string can only match at code-point boundaries of well-formed text);
// the streaming hold-back, which cuts the text, is counted in code points (see `codePointsBack`).

/** A stop string matched: the string, and the length to truncate the text to (-1: no truncation). */
export interface StopMatch {
  stop: string;
  truncateTo: number;
}

/**
 * Looks for a stop string that ends inside the last `newCharCount` characters of `outputText` (the search
 * starts `stop.length - 1` characters before them). When several match, the one that completes earliest
 * wins, ties by list order. The text is cut before the stop string, or after it when `includeInOutput`.
 */
export function checkStopStrings(
  outputText: string,
  newCharCount: number,
  stop: readonly string[],
  includeInOutput: boolean,
): StopMatch | null {
  if (!newCharCount || stop.length === 0) return null;
  let best: string | null = null;
  let bestIndex = 0;
  let bestEnd = Number.MAX_SAFE_INTEGER;
  for (const stopString of stop) {
    // Python's str.find(s, 1 - new_char_count - len(s)): a negative start counts from the end.
    const start = Math.max(0, outputText.length + 1 - newCharCount - stopString.length);
    const index = outputText.indexOf(stopString, start);
    if (index === -1) continue;
    const end = index + stopString.length;
    if (end < bestEnd) {
      best = stopString;
      bestIndex = index;
      bestEnd = end;
    }
  }
  if (best === null) return null;
  if (includeInOutput) return { stop: best, truncateTo: bestEnd >= outputText.length ? -1 : bestEnd };
  return { stop: best, truncateTo: bestIndex };
}

/** Number of code points of `s` (Python's `len`). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The UTF-16 index `count` code points before the end of `s` (0 if `s` is shorter): Python's `s[:-count]`. */
export function codePointsBack(s: string, count: number): number {
  let i = s.length;
  for (let k = 0; k < count && i > 0; k++) {
    i--;
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const h = s.charCodeAt(i - 1);
      if (h >= 0xd800 && h <= 0xdbff) i--;
    }
  }
  return i;
}
