// The grammar rewrites vLLM's frontend applies before it sends a request to xgrammar, which reads EBNF only
// (vllm/v1/structured_output/utils.py: `choice_as_grammar`, `grammar_is_likely_lark`,
// `convert_lark_to_ebnf`; applied by `validate_xgrammar_grammar` in backend_xgrammar.py). The engine's
// xgrammar backend compiles no `choice`, so the choices travel as a grammar.

/** `choice_as_grammar`: `root ::= "a" | "b"`, with `"` and `\` escaped. */
export function choiceAsGrammar(choice: readonly string[]): string {
  return `root ::= ${choice.map((c) => `"${c.replace(/["\\]/g, (ch) => `\\${ch}`)}"`).join(" | ")}`;
}

/** Python's `re.sub(r"(#|//).*$", "", line).strip()`: a line without its comment. */
function withoutComment(line: string): string {
  const hash = line.indexOf("#");
  const slashes = line.indexOf("//");
  const cut = [hash, slashes].filter((i) => i !== -1);
  return (cut.length === 0 ? line : line.slice(0, Math.min(...cut))).trim();
}

/** `grammar_is_likely_lark`: no line (comments removed) defines a rule with `::=`. */
export function grammarIsLikelyLark(grammar: string): boolean {
  if (grammar === "") return false;
  return !grammar.split("\n").some((line) => withoutComment(line).includes("::="));
}

/** The rule names a definition refers to (quoted strings and operators removed first). */
function references(definition: string): string[] {
  const bare = definition.replace(/"[^"]*"/g, "").replace(/[+*?()|[\]{}]/g, " ");
  return bare.match(/\b[a-zA-Z_][a-zA-Z0-9_]*\b/g) ?? [];
}

const count = (text: string, ch: string) => text.split(ch).length - 1;

/** `convert_lark_to_ebnf`: a Lark grammar as EBNF with a `root` rule; throws `Error` with vLLM's message. */
export function convertLarkToEbnf(grammar: string): string {
  if (grammar.trim() === "") throw new Error("Grammar string cannot be empty");
  const lines = grammar.split("\n").map(withoutComment);
  const defined = new Set<string>();
  let firstRule: string | undefined;
  for (const line of lines) {
    if (line === "" || line.startsWith("|") || !line.includes(":")) continue;
    const name = stripChars(line.slice(0, line.indexOf(":")).trim(), "?");
    defined.add(name);
    firstRule ??= name;
    if (name === "start") firstRule = "start";
  }
  if (defined.size === 0) throw new Error("No valid rules found in grammar");

  const out = [`root ::= ${firstRule}`];
  const referenced = new Set<string>();
  let rule: string | undefined;
  let alternatives: string[] = [];
  const takeDefinition = (text: string, what: string, lineNum: number): string => {
    if (count(text, "'") % 2 !== 0 || count(text, '"') % 2 !== 0) {
      throw new Error(`Error on line ${lineNum}: Mismatched quotes in ${what} on line ${lineNum}`);
    }
    const converted = text.replace(/'([^']*)'/g, '"$1"');
    for (const r of references(converted)) referenced.add(r);
    return converted.trim();
  };
  lines.forEach((line, i) => {
    const lineNum = i + 1;
    if (line === "") return;
    if (line.includes(":") && !line.startsWith("|")) {
      if (rule !== undefined) out.push(`${rule} ::= ${alternatives.join(" | ")}`);
      const colon = line.indexOf(":");
      rule = stripChars(line.slice(0, colon).trim(), "?");
      alternatives = [takeDefinition(line.slice(colon + 1), `rule '${rule}'`, lineNum)];
    } else if (line.startsWith("|")) {
      if (rule === undefined) {
        throw new Error(
          `Error on line ${lineNum}: Alternative '|' on line ${lineNum} without a preceding rule definition`,
        );
      }
      alternatives.push(takeDefinition(line.slice(1).trim(), `alternative for rule '${rule}'`, lineNum));
    }
  });
  if (rule !== undefined) out.push(`${rule} ::= ${alternatives.join(" | ")}`);
  const undefinedRules = [...referenced].filter((r) => !defined.has(r) && r !== "root").sort();
  if (undefinedRules.length > 0) {
    throw new Error(`Referenced rules are not defined: ${undefinedRules.join(", ")}`);
  }
  return out.join("\n");
}

/** Python's `str.strip(chars)`. */
function stripChars(s: string, chars: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && chars.includes(s[start]!)) start++;
  while (end > start && chars.includes(s[end - 1]!)) end--;
  return s.slice(start, end);
}
