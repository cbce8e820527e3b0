// OpenAI request fields that constrain what the engine may sample: `logit_bias` and `response_format`.
// Both go to the engine as vLLM's frontend sends them; they used to be dropped silently, so a client that
// asked for JSON got free text without being told.
import type { SamplingParamsInit } from "@vllm-engine-core/client";
import { badRequest } from "./errors.js";
import type { Body } from "./params.js";

/**
 * `logit_bias` {token id (as a string): bias}, as vLLM's `SamplingParams.from_optional`
 * (vllm/sampling_params.py) converts it: integer token ids, each bias clamped to [-100, 100]; keys that are
 * not integers are refused with vLLM's message.
 */
export function logitBiasOf(body: Body): Record<string, number> | undefined {
  const v = body.logit_bias;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw badRequest("`logit_bias` must be an object mapping token ids to biases", "logit_bias");
  }
  const out: Record<string, number> = {};
  const invalid: string[] = [];
  for (const [token, bias] of Object.entries(v as Body)) {
    if (typeof bias !== "number" || !Number.isFinite(bias)) {
      throw badRequest(`\`logit_bias\`[${JSON.stringify(token)}] must be a number`, "logit_bias");
    }
    if (!/^\s*[-+]?\d+\s*$/.test(token)) {
      invalid.push(token);
      continue;
    }
    out[String(Number.parseInt(token, 10))] = Math.min(100, Math.max(-100, bias));
  }
  if (invalid.length > 0) {
    const list = `[${invalid.map((k) => `'${k}'`).join(", ")}]`;
    throw badRequest(
      `logit_bias contains key(s) that cannot be converted to integer token IDs: ${list}`,
      "logit_bias",
    );
  }
  return out;
}

type StructuredOutputs = NonNullable<SamplingParamsInit["structuredOutputs"]>;

/**
 * `response_format` as vLLM's `structured_outputs_from_response_format`
 * (vllm/entrypoints/openai/engine/protocol.py): `text` → nothing, `json_object` → `json_object: true`,
 * `json_schema` → `json: <its schema>` (vLLM's validator: the `json_schema` object is required),
 * `structural_tag` → the format itself as a JSON string.
 */
export function structuredOutputsOf(body: Body): StructuredOutputs | undefined {
  const rf = body.response_format;
  if (rf === undefined || rf === null) return undefined;
  if (typeof rf !== "object" || Array.isArray(rf)) {
    throw badRequest("`response_format` must be an object", "response_format");
  }
  const format = rf as Body;
  switch (format.type) {
    case "text":
      return undefined;
    case "json_object":
      return { jsonObject: true };
    case "json_schema": {
      const js = format.json_schema;
      if (typeof js !== "object" || js === null || Array.isArray(js)) {
        throw badRequest(
          "When response_format type is 'json_schema', the 'json_schema' field must be provided.",
          "response_format",
        );
      }
      const schema = (js as Body).schema;
      if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
        throw badRequest(
          "`response_format.json_schema.schema` must be a JSON schema object",
          "response_format",
        );
      }
      return { json: schema as Record<string, unknown> };
    }
    case "structural_tag":
      return { structuralTag: JSON.stringify(format) };
    default:
      throw badRequest(
        `\`response_format.type\` ${JSON.stringify(format.type)} is not supported (text, json_object, json_schema, structural_tag)`,
        "response_format",
      );
  }
}
