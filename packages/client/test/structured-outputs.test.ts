// The structured-outputs backend each request names (`_backend`, `_backend_was_auto`), chosen as vLLM's
// frontend chooses it (vllm/sampling_params.py `_validate_structured_outputs`): without it the engine
// finishes every structured-outputs request with ERROR ("Unsupported structured output backend: None").
// The regex cases are what xgrammar's own regex converter (its WebAssembly build) answered; the Lark cases
// are vLLM's `convert_lark_to_ebnf` / `choice_as_grammar` outputs, run on vLLM at the pinned revision.
import {
  decodeValue,
  encodeAddRequest,
  FinishReason,
  type StructuredOutputsParamsInit,
} from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidRequestError } from "../src/errors.js";
import { type CallRequest, resolveStructuredOutputs } from "../src/index.js";
import { buildRequest } from "../src/request.js";
import { convertLarkToEbnf, grammarIsLikelyLark } from "../src/structured-outputs/grammar-text.js";
import { xgrammarRegexError } from "../src/structured-outputs/regex-support.js";
import { collect, connectToMockEngine, type Harness } from "./helpers.js";

const auto = (so: StructuredOutputsParamsInit) => resolveStructuredOutputs(so, "auto", "r");
const backendOf = (so: StructuredOutputsParamsInit) => auto(so).backend;

describe("auto: which backend each request gets", () => {
  it("xgrammar for what xgrammar supports, with _backend_was_auto", () => {
    expect(auto({ jsonObject: true })).toEqual({
      jsonObject: true,
      backend: "xgrammar",
      backendWasAuto: true,
    });
    expect(backendOf({ json: { type: "object", properties: { a: { type: "integer", minimum: 0 } } } })).toBe(
      "xgrammar",
    );
    expect(backendOf({ json: '{"type": "string", "format": "ipv4"}' })).toBe("xgrammar");
    expect(backendOf({ json: { type: "string", pattern: "^[a-z]+\\d{2,3}$" } })).toBe("xgrammar");
    expect(backendOf({ regex: "[a-z]+@[a-z]+\\.com" })).toBe("xgrammar");
    expect(backendOf({ grammar: 'root ::= "yes" | "no"' })).toBe("xgrammar");
    expect(
      backendOf({
        structuralTag: '{"type": "structural_tag", "format": {"type": "const_string", "value": "x"}}',
      }),
    ).toBe("xgrammar");
  });

  it("guidance for JSON-schema keywords xgrammar lacks (has_xgrammar_unsupported_json_features)", () => {
    for (const json of [
      { type: "integer", multipleOf: 3 },
      { type: "array", items: { type: "string" }, uniqueItems: true },
      { type: "object", properties: { at: { type: "string", format: "binary" } } },
      { type: "object", propertyNames: { maxLength: 3 } },
      { anyOf: [{ type: "number", multipleOf: 0.5 }, { type: "null" }] },
    ]) {
      expect(auto({ json }), JSON.stringify(json)).toMatchObject({
        backend: "guidance",
        backendWasAuto: true,
      });
    }
  });

  it("outlines for a schema with patternProperties, which guidance lacks too", () => {
    const json = { type: "object", patternProperties: { "^x": { type: "integer" } } };
    expect(auto({ json })).toMatchObject({ backend: "outlines", backendWasAuto: true });
  });

  it("guidance for regexes xgrammar's regex converter refuses, also as a schema `pattern`", () => {
    for (const regex of ["a(?=b)", "(?<!a)b", "(a)\\1", "\\bword\\b", "\\p{L}+", "(?i)abc", "a++", "[]a]"]) {
      expect(backendOf({ regex }), regex).toBe("guidance");
    }
    expect(backendOf({ json: { type: "string", pattern: "(?<=@)\\w+" } })).toBe("guidance");
  });

  it("choices become xgrammar's EBNF grammar (choice_as_grammar), since the engine compiles no choice for xgrammar", () => {
    expect(auto({ choice: ["a", 'b"c', "d\\e"] })).toEqual({
      choice: null,
      grammar: 'root ::= "a" | "b\\"c" | "d\\\\e"',
      backend: "xgrammar",
      backendWasAuto: true,
    });
  });

  it("a Lark grammar goes to xgrammar as EBNF; one that does not convert goes to guidance as it is", () => {
    expect(auto({ grammar: "rule: 'hello'" })).toMatchObject({
      grammar: 'root ::= rule\nrule ::= "hello"',
      backend: "xgrammar",
    });
    expect(auto({ grammar: 'start: a b\na: "x"' })).toMatchObject({
      grammar: 'start: a b\na: "x"',
      backend: "guidance",
    });
  });

  it("a structural tag that is not JSON, or a deprecated one without triggers, goes to guidance", () => {
    expect(backendOf({ structuralTag: "not json" })).toBe("guidance");
    expect(
      backendOf({ structuralTag: '{"structures": [{"begin": "<a>", "schema": {}, "end": "</a>"}]}' }),
    ).toBe("guidance");
    expect(
      backendOf({
        structuralTag: '{"structures": [{"begin": "<a>", "schema": {}, "end": "</a>"}], "triggers": ["<a"]}',
      }),
    ).toBe("xgrammar");
  });
});

describe("a configured backend", () => {
  it("is named as it is, not auto, and nothing is rewritten for guidance", () => {
    expect(resolveStructuredOutputs({ choice: ["a", "b"] }, "guidance")).toEqual({
      choice: ["a", "b"],
      backend: "guidance",
    });
    expect(resolveStructuredOutputs({ choice: ["a"] }, "xgrammar")).toEqual({
      choice: null,
      grammar: 'root ::= "a"',
      backend: "xgrammar",
    });
  });

  it("xgrammar with a request xgrammar cannot take, or outlines with a grammar: InvalidRequestError (vLLM: 400)", () => {
    expect(() => resolveStructuredOutputs({ regex: "a(?=b)" }, "xgrammar")).toThrow(
      /Failed to transform regex into a grammar: Lookahead is not supported yet/,
    );
    expect(() => resolveStructuredOutputs({ json: { type: "integer", multipleOf: 2 } }, "xgrammar")).toThrow(
      /features not supported by xgrammar/,
    );
    expect(() => resolveStructuredOutputs({ grammar: 'root ::= "a"' }, "outlines")).toThrow(
      /Outlines structured outputs backend does not support grammar specifications/,
    );
  });

  it("a request naming another backend is refused (request-level selection is not supported)", () => {
    const error = (() => {
      try {
        resolveStructuredOutputs({ jsonObject: true, backend: "guidance" }, "xgrammar", "r1");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).field).toBe("samplingParams.structuredOutputs.backend");
    expect((error as InvalidRequestError).detail).toContain(
      "The request specified 'guidance', but vLLM was initialised with 'xgrammar'",
    );
    // A backend an earlier `auto` resolution set is re-resolved.
    expect(auto({ regex: "a+", backend: "guidance", backendWasAuto: true })).toMatchObject({
      backend: "xgrammar",
      backendWasAuto: true,
    });
  });

  it("vLLM's content checks: empty choice, blank grammar or json, json_object false", () => {
    for (const [so, message] of [
      [{ choice: [] }, "Choice '[]' cannot be an empty list"],
      [{ grammar: "  " }, "structured_outputs.grammar cannot be an empty string"],
      [{ json: " " }, "structured_outputs.json cannot be an empty string"],
      [{ jsonObject: false }, "structured_outputs.json_object must be True if set"],
      [{ json: "{not json" }, "Invalid JSON grammar specification."],
    ] as const) {
      expect(() => auto(so as StructuredOutputsParamsInit), JSON.stringify(so)).toThrow(message);
    }
  });
});

describe("xgrammar's regex limits and vLLM's grammar conversions", () => {
  it("regexes xgrammar converts, and why it refuses the others", () => {
    for (const ok of [
      "(?:ab)+",
      "(?<name>ab)",
      "a{2,3}",
      "a{3,}",
      "a*?",
      "a{2}?",
      "a??",
      "[\\b]",
      "[^]",
      "\\d+\\.\\d*",
      "^abc$",
      "a|",
    ]) {
      expect(xgrammarRegexError(ok), ok).toBeNull();
    }
    for (const [re, why] of [
      ["a(?!b)", "Lookahead is not supported yet."],
      ["(?<=a)b", "Lookbehind is not supported yet."],
      ["(?<n>a)\\k<n>", "Backreference is not supported yet."],
      ["\\Bx", "Word boundary is not supported yet."],
      ["(?P<n>a)", "Group modifier flag is not supported yet."],
      ["a+*", "Two consecutive repetition modifiers are not allowed."],
      ["a{2}+", "Two consecutive repetition modifiers are not allowed."],
      ["x{1,2}{3}", "Two consecutive repetition modifiers are not allowed."],
      ["a{,3}", "Invalid repetition count."],
      ["a{2,1}", "Lower bound is larger than upper bound: 2 > 1"],
      ["(a", "The parenthesis is not closed."],
      ["a)", "Unmatched ')'"],
      ["[a", "Unclosed '['"],
    ] as const) {
      expect(xgrammarRegexError(re), re).toBe(why);
    }
  });

  it("Lark → EBNF as vLLM converts it", () => {
    const lark =
      '?start: expr\nexpr: term ("+" term)*  // sum\n    | "-" term\nterm: NUMBER # a number\nNUMBER: /[0-9]+/';
    expect(grammarIsLikelyLark(lark)).toBe(true);
    expect(grammarIsLikelyLark('root ::= "a" # x: y')).toBe(false);
    expect(convertLarkToEbnf(lark)).toBe(
      'root ::= start\nstart ::= expr\nexpr ::= term ("+" term)* | "-" term\nterm ::= NUMBER\nNUMBER ::= /[0-9]+/',
    );
    expect(() => convertLarkToEbnf('start: "unclosed')).toThrow(
      "Error on line 1: Mismatched quotes in rule 'start' on line 1",
    );
  });
});

/** The `_backend` / `_backend_was_auto` entries of the structured_outputs map anywhere in a decoded value. */
function wireStructuredOutputs(value: unknown): Map<string, unknown> | Record<string, unknown> | undefined {
  if (value instanceof Map) {
    if (value.has("_backend")) return value;
    for (const v of value.values()) {
      const found = wireStructuredOutputs(v);
      if (found) return found;
    }
  } else if (Array.isArray(value)) {
    for (const v of value) {
      const found = wireStructuredOutputs(v);
      if (found) return found;
    }
  } else if (typeof value === "object" && value !== null) {
    if ("_backend" in value) return value as Record<string, unknown>;
    for (const v of Object.values(value)) {
      const found = wireStructuredOutputs(v);
      if (found) return found;
    }
  }
  return undefined;
}

describe("on the wire", () => {
  const request = (structuredOutputs: StructuredOutputsParamsInit): CallRequest => ({
    requestId: "so",
    promptTokenIds: [1, 2, 3],
    samplingParams: { maxTokens: 4, structuredOutputs },
  });

  it("the encoded request carries _backend and _backend_was_auto under msgspec's (vLLM's) field names", () => {
    const wire = buildRequest(request({ regex: "[0-9]+" }), 0, { maxModelLen: 64 });
    const frames = encodeAddRequest(wire);
    const so = wireStructuredOutputs(decodeValue(frames[1]!));
    const get = (k: string) => (so instanceof Map ? so.get(k) : so?.[k]);
    expect(get("_backend")).toBe("xgrammar");
    expect(get("_backend_was_auto")).toBe(true);
    expect(get("regex")).toBe("[0-9]+");
  });

  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("the mock engine (which refuses a missing _backend as vLLM's engine does) runs it, with the configured backend", async () => {
    h = await connectToMockEngine({}, { structuredOutputs: { backend: "guidance" } });
    expect(h.client.structuredOutputsBackend).toBe("guidance");
    const { last } = await collect(await h.client.call(request({ json: { type: "object" } })));
    expect(last.finishReason).toBe(FinishReason.LENGTH); // not ERROR
    const add = h.engine.events.find((e) => e.event === "add" && e.requestId === "so");
    expect(add?.structuredOutputs).toEqual({ backend: "guidance", backendWasAuto: false, kinds: ["json"] });
  });
});
