// Which regular expressions xgrammar turns into a grammar. vLLM's `validate_xgrammar_grammar`
// (vllm/v1/structured_output/backend_xgrammar.py) compiles the request's regex with
// `xgr.Grammar.from_regex`, and in `auto` mode a failure sends the request to guidance instead. There is no
// xgrammar for Node that does this (see the client README, "Structured outputs"), so the regex features
// xgrammar's regex converter (cpp/regex_converter.cc) refuses are recognised here, syntactically: each was
// checked against xgrammar's own converter (its WebAssembly build), e.g. `a(?=b)` "Lookahead is not supported
// yet", `a++` "Two consecutive repetition modifiers are not allowed", `[]a]` "Empty character class".

/** Why xgrammar's regex converter refuses `regex`, or null when it converts it. */
export function xgrammarRegexError(regex: string): string | null {
  // What came last: an atom, a quantifier, or a quantifier made lazy by `?` (`a*?` is fine, `a*?+` is not).
  let last: "start" | "atom" | "quantifier" | "lazy" = "start";
  let depth = 0;
  const quantifier = (c: string): string | null => {
    if (last === "quantifier" && c === "?") {
      last = "lazy";
      return null;
    }
    if (last === "quantifier" || last === "lazy")
      return "Two consecutive repetition modifiers are not allowed.";
    last = "quantifier";
    return null;
  };
  let i = 0;
  while (i < regex.length) {
    const c = regex[i]!;
    if (c === "\\") {
      const next = regex[i + 1];
      if (next === undefined) return "Escape sequence is not finished.";
      if ((next >= "1" && next <= "9") || next === "k") return "Backreference is not supported yet.";
      if (next === "b" || next === "B") return "Word boundary is not supported yet.";
      if (next === "p" || next === "P") {
        return "Unicode character class escape sequence is not supported yet.";
      }
      i += 2;
      last = "atom";
      continue;
    }
    if (c === "[") {
      let j = i + 1;
      if (regex[j] === "^") j++;
      else if (regex[j] === "]") return "Empty character class is not allowed in regex.";
      // `[^]` closes at once (any character).
      while (j < regex.length && regex[j] !== "]") j += regex[j] === "\\" ? 2 : 1;
      if (j >= regex.length) return "Unclosed '['";
      i = j + 1;
      last = "atom";
      continue;
    }
    if (c === "(") {
      if (regex[i + 1] === "?") {
        const kind = regex[i + 2];
        if (kind === "=" || kind === "!") return "Lookahead is not supported yet.";
        if (kind === "<" && (regex[i + 3] === "=" || regex[i + 3] === "!")) {
          return "Lookbehind is not supported yet.";
        }
        // Non-capturing `(?:` and named `(?<name>` groups are converted; flags (`(?i)`, `(?P<n>`) are not.
        if (kind !== ":" && kind !== "<") return "Group modifier flag is not supported yet.";
      }
      depth++;
      last = "start";
      i++;
      continue;
    }
    if (c === ")") {
      depth--;
      if (depth < 0) return "Unmatched ')'";
      last = "atom";
      i++;
      continue;
    }
    if (c === "*" || c === "+" || c === "?") {
      const error = quantifier(c);
      if (error !== null) return error;
      i++;
      continue;
    }
    if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(regex.slice(i));
      if (m === null) return "Invalid repetition count.";
      if (m[3] !== undefined && m[3] !== "" && Number(m[1]) > Number(m[3])) {
        return `Lower bound is larger than upper bound: ${m[1]} > ${m[3]}`;
      }
      const error = quantifier(c);
      if (error !== null) return error;
      i += m[0].length;
      continue;
    }
    last = "atom";
    i++;
  }
  if (depth > 0) return "The parenthesis is not closed.";
  return null;
}
