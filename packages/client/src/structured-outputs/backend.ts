// The structured-outputs backend a request names in `_backend` / `_backend_was_auto`, chosen as vLLM's
// frontend chooses it in `SamplingParams._validate_structured_outputs` (vllm/sampling_params.py): the
// engine only builds a grammar for a request whose `_backend` names a backend
// (`StructuredOutputManager.grammar_init`, vllm/v1/structured_output/__init__.py); without one it finishes
// the request with ERROR ("Unsupported structured output backend: None").
//
// - A configured backend (`xgrammar`, `guidance`, `outlines`, `lm-format-enforcer`) is used as it is, after
//   that backend's request checks that need no grammar library.
// - `auto`: xgrammar, unless the request needs what xgrammar lacks (validate_xgrammar_grammar fails), then
//   guidance; outlines instead of guidance for a JSON schema with `patternProperties`.
// xgrammar's acceptance is decided without xgrammar (none is usable in Node): vLLM's own feature checks plus
// xgrammar's regex limits (json-schema-support.ts, regex-support.ts). What that cannot see (an EBNF grammar
// that does not parse, a schema xgrammar's converter rejects for other reasons) goes to xgrammar, whose
// compile error then fails the request on the engine.
import type { StructuredOutputsBackend } from "@vllm-engine-core/config";
import type { StructuredOutputsParamsInit } from "@vllm-engine-core/protocol";
import { InvalidRequestError } from "../errors.js";
import { choiceAsGrammar, convertLarkToEbnf, grammarIsLikelyLark } from "./grammar-text.js";
import {
  hasGuidanceUnsupportedJsonFeatures,
  hasXgrammarUnsupportedJsonFeatures,
  xgrammarSchemaPatternError,
} from "./json-schema-support.js";
import { xgrammarRegexError } from "./regex-support.js";

const FIELD = "samplingParams.structuredOutputs";

/** A request xgrammar cannot take (vLLM's validate_xgrammar_grammar raises ValueError). */
class XgrammarRefusal extends Error {}

function invalid(requestId: string | undefined, field: string, detail: string): InvalidRequestError {
  return new InvalidRequestError({ requestId, field: `${FIELD}${field}`, detail });
}

/** `json` as a schema object (`json.loads` of a string); throws `SyntaxError` for text that is not JSON. */
function schemaOf(json: unknown): unknown {
  if (typeof json === "string") return JSON.parse(json);
  return json instanceof Map ? Object.fromEntries(json) : json;
}

/** Python truthiness of a constraint field (`if so_params.json:`): "", [], {} and null are false. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === "" || v === false) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

/**
 * vLLM's `validate_xgrammar_grammar`: throws XgrammarRefusal when xgrammar cannot take the request;
 * otherwise returns it as xgrammar takes it (choices as an EBNF grammar, a Lark grammar converted to EBNF).
 */
function forXgrammar(so: StructuredOutputsParamsInit): StructuredOutputsParamsInit {
  if (truthy(so.regex)) {
    const error = xgrammarRegexError(so.regex!);
    if (error !== null) throw new XgrammarRefusal(`Failed to transform regex into a grammar: ${error}`);
  }
  if (truthy(so.choice)) return { ...so, choice: null, grammar: choiceAsGrammar(so.choice!) };
  if (truthy(so.json)) {
    let schema: unknown;
    try {
      schema = schemaOf(so.json);
    } catch {
      throw new XgrammarRefusal("Invalid JSON grammar specification.");
    }
    if (hasXgrammarUnsupportedJsonFeatures(schema)) {
      throw new XgrammarRefusal("The provided JSON schema contains features not supported by xgrammar.");
    }
    const error = xgrammarSchemaPatternError(schema);
    if (error !== null) throw new XgrammarRefusal(`Failed to transform json schema into a grammar: ${error}`);
    return so;
  }
  if (truthy(so.grammar)) {
    if (!grammarIsLikelyLark(so.grammar!)) return so;
    try {
      return { ...so, grammar: convertLarkToEbnf(so.grammar!) };
    } catch {
      throw new XgrammarRefusal("Failed to convert the grammar from Lark to EBNF. ");
    }
  }
  if (truthy(so.structuralTag)) {
    let tag: unknown;
    try {
      tag = JSON.parse(so.structuralTag!);
    } catch {
      throw new XgrammarRefusal("Invalid structural tag specification.");
    }
    // The deprecated form: every structure needs begin, schema and end, and the triggers must be there.
    if (typeof tag === "object" && tag !== null && "structures" in tag) {
      const { structures, triggers } = tag as { structures: unknown; triggers?: unknown };
      const complete =
        Array.isArray(structures) &&
        structures.every(
          (s) => typeof s === "object" && s !== null && "begin" in s && "schema" in s && "end" in s,
        ) &&
        Array.isArray(triggers);
      if (!complete) throw new XgrammarRefusal("Invalid structural tag specification.");
    }
  }
  return so;
}

/**
 * Returns `so` as vLLM's frontend would send it with `configured` as `--structured-outputs-config.backend`:
 * `backend` (`_backend`) and `backendWasAuto` (`_backend_was_auto`) set, rewritten for xgrammar when that is
 * the backend. Throws InvalidRequestError where vLLM's validation raises (a 400 from vLLM's server).
 */
export function resolveStructuredOutputs(
  so: StructuredOutputsParamsInit,
  configured: StructuredOutputsBackend,
  requestId?: string,
): StructuredOutputsParamsInit {
  let out: StructuredOutputsParamsInit = { ...so };
  const requested = so.backend;
  if (requested !== undefined && requested !== null && requested !== "") {
    // Request-level backend selection is not supported; a backend `auto` chose earlier may stay.
    if (requested !== configured && !(configured === "auto" && so.backendWasAuto === true)) {
      throw invalid(
        requestId,
        ".backend",
        `Request-level structured output backend selection is not supported. The request specified '${requested}', ` +
          `but vLLM was initialised with '${configured}'. This error can be resolved by removing '_backend' from the request.`,
      );
    }
  } else {
    out.backend = configured;
  }

  // Request content validation.
  if (Array.isArray(so.choice) && so.choice.length === 0) {
    throw invalid(requestId, ".choice", "Choice '[]' cannot be an empty list");
  }
  if (typeof so.grammar === "string" && so.grammar.trim() === "") {
    throw invalid(requestId, ".grammar", "structured_outputs.grammar cannot be an empty string");
  }
  if (typeof so.json === "string" && so.json.trim() === "") {
    throw invalid(requestId, ".json", "structured_outputs.json cannot be an empty string");
  }
  if (so.jsonObject === false) {
    throw invalid(
      requestId,
      ".jsonObject",
      "structured_outputs.json_object must be True if set; omit structured_outputs to disable structured outputs",
    );
  }

  const jsonMustParse = () => {
    if (typeof so.json !== "string") return;
    try {
      JSON.parse(so.json);
    } catch {
      throw invalid(requestId, ".json", "Invalid JSON grammar specification.");
    }
  };
  const outlinesChecks = () => {
    jsonMustParse();
    if (!truthy(so.regex) && !truthy(so.json) && !truthy(so.choice) && truthy(so.grammar)) {
      throw invalid(
        requestId,
        ".grammar",
        "Outlines structured outputs backend does not support grammar specifications",
      );
    }
  };

  switch (configured) {
    case "xgrammar":
      try {
        return forXgrammar(out);
      } catch (error) {
        if (error instanceof XgrammarRefusal) throw invalid(requestId, "", error.message);
        throw error;
      }
    case "guidance":
      return out;
    case "outlines":
      outlinesChecks();
      return out;
    case "lm-format-enforcer":
      jsonMustParse();
      return out;
    case "auto":
      try {
        out = { ...forXgrammar(out), backend: "xgrammar" };
      } catch (error) {
        if (!(error instanceof XgrammarRefusal)) throw error;
        let skipGuidance = false;
        if (truthy(so.json)) {
          let schema: unknown;
          try {
            schema = schemaOf(so.json);
          } catch {
            // vLLM's json.loads raises here: a ValueError, answered 400.
            throw invalid(requestId, ".json", "Invalid JSON grammar specification.");
          }
          skipGuidance = hasGuidanceUnsupportedJsonFeatures(schema);
        }
        if (skipGuidance) {
          outlinesChecks();
          out.backend = "outlines";
        } else {
          out.backend = "guidance";
        }
      }
      out.backendWasAuto = true;
      return out;
  }
}
