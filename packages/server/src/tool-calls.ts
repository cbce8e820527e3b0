// The request side of tool calling, as vLLM's chat endpoint does it:
// - `tools` / `tool_choice` / `parallel_tool_calls` checked as `ChatCompletionRequest.check_tool_usage`
//   (vllm/entrypoints/openai/chat_completion/protocol.py), with its messages and params;
// - the server-flag check of `OnlineRenderer.render_chat` (vllm/renderers/online_renderer.py): "auto" needs
//   `--enable-auto-tool-choice` and `--tool-call-parser`, "required" / a named function need a parser;
// - the tools as the chat template sees them (`ChatCompletionToolsParam.model_dump()`);
// - `tool_choice` "required" / named → a JSON-schema constraint on the output (`ToolParser.adjust_request`
//   + `get_json_schema_from_tools`, vllm/tool_parsers/{abstract_tool_parser,utils}.py);
// - assistant `tool_calls` arguments parsed back to objects for the template and the deprecated
//   `reasoning_content` renamed to `reasoning` (chat_utils.py `_postprocess_messages`,
//   protocol.py `_normalize_messages_before`, `_parse_chat_message_content`).
import type { ChatMessage } from "@vllm-engine-core/text";
import { badRequest } from "./errors.js";
import type { Body } from "./params.js";
import type { ToolDefinition, ToolParser } from "./tool-parsers/index.js";

export type ToolChoice = "none" | "auto" | "required" | { name: string };

export interface ToolRequest {
  tools: ToolDefinition[] | undefined;
  /** After vLLM's defaults: "auto" when tools are given without a choice, else "none". */
  toolChoice: ToolChoice;
  /** vLLM filters to the first call only when the request says `parallel_tool_calls: false`. */
  parallelToolCalls: boolean;
}

/** The server's tool flags (`--enable-auto-tool-choice`, `--tool-call-parser`). */
export interface ToolServing {
  enableAutoToolChoice: boolean;
  /** Set only with `enableAutoToolChoice` (vLLM's ParserManager ignores the parser otherwise). */
  toolParser: ToolParser | undefined;
}

const CORRECT_USAGE = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';

function toolsOf(body: Body): ToolDefinition[] | undefined {
  const raw = body.tools;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw badRequest("`tools` must be a list", "tools");
  if (raw.length === 0) {
    throw badRequest(
      "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.",
      "tools",
    );
  }
  return raw.map((t, i) => {
    const tool = t as Body;
    const fn = tool?.function as Body | undefined;
    if (typeof tool !== "object" || tool === null || (tool.type !== undefined && tool.type !== "function")) {
      throw badRequest(`tools[${i}] must be a {"type": "function", "function": {...}} tool`, "tools");
    }
    if (typeof fn !== "object" || fn === null || typeof fn.name !== "string") {
      throw badRequest(`tools[${i}].function must be an object with a string \`name\``, "tools");
    }
    if (fn.parameters !== undefined && fn.parameters !== null && typeof fn.parameters !== "object") {
      throw badRequest(`tools[${i}].function.parameters must be a JSON schema object`, "tools");
    }
    return tool as unknown as ToolDefinition;
  });
}

/** `check_tool_usage` (protocol.py) plus the request's `parallel_tool_calls`. */
export function toolRequestOf(body: Body): ToolRequest {
  const tools = toolsOf(body);
  const parallel = body.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null && typeof parallel !== "boolean") {
    throw badRequest("`parallel_tool_calls` must be a boolean", "parallel_tool_calls");
  }
  const parallelToolCalls = parallel !== false;
  const raw = body.tool_choice;
  // Absent (or null): "auto" when tools are given, else vLLM's field default "none".
  if (raw === undefined || raw === null) {
    return { tools, toolChoice: tools ? "auto" : "none", parallelToolCalls };
  }
  if (raw === "none") return { tools, toolChoice: "none", parallelToolCalls };
  if (tools === undefined) throw badRequest("When using `tool_choice`, `tools` must be set.", "tool_choice");
  if (raw === "auto" || raw === "required") return { tools, toolChoice: raw, parallelToolCalls };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw badRequest(
      `Invalid value for \`tool_choice\`: ${String(raw)}! Only named tools, "none", "auto" or "required" are supported.`,
      "tool_choice",
    );
  }
  const fn = (raw as Body).function;
  if (typeof fn !== "object" || fn === null || Array.isArray(fn)) {
    throw badRequest(
      `Invalid value for \`function\`: \`${JSON.stringify(fn ?? null)}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
      "tool_choice.function",
    );
  }
  if (!("name" in fn)) {
    throw badRequest(
      `Expected field \`name\` in \`function\` in \`tool_choice\`! ${CORRECT_USAGE}`,
      "tool_choice.function.name",
    );
  }
  const name = (fn as Body).name;
  if (typeof name !== "string" || name.length === 0) {
    throw badRequest(
      `Invalid \`name\` in \`function\`: \`${String(name)}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
      "tool_choice.function.name",
    );
  }
  if (!tools.some((t) => t.function.name === name)) {
    throw badRequest(
      "The tool specified in `tool_choice` does not match any of the specified `tools`",
      "tool_choice",
    );
  }
  return { tools, toolChoice: { name }, parallelToolCalls };
}

/** `OnlineRenderer.render_chat`'s check that the server can parse what `tool_choice` asks for. */
export function checkToolServing(request: ToolRequest, serving: ToolServing): void {
  const choice = request.toolChoice;
  if (choice === "none" || serving.toolParser !== undefined) return;
  if (choice === "auto") {
    if (!serving.enableAutoToolChoice) {
      throw badRequest(
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      );
    }
    return;
  }
  const desc = choice === "required" ? '"required"' : `function "${choice.name}"`;
  throw badRequest(`tool_choice=${desc} requires --tool-call-parser to be set`);
}

/** The tools as the template sees them: `ChatCompletionToolsParam.model_dump()` (unset optional fields null). */
export function templateTools(tools: readonly ToolDefinition[]): Record<string, unknown>[] {
  return tools.map((t) => {
    const fn = t.function as ToolDefinition["function"] & { strict?: boolean; defer_loading?: boolean };
    const outer = t as ToolDefinition & { defer_loading?: boolean };
    return {
      type: "function",
      function: {
        name: fn.name,
        description: fn.description ?? null,
        parameters: fn.parameters ?? null,
        ...(fn.strict === undefined || fn.strict === null ? {} : { strict: fn.strict }),
        ...((fn.defer_loading ?? outer.defer_loading) !== undefined
          ? { defer_loading: fn.defer_loading ?? outer.defer_loading }
          : {}),
      },
      ...(outer.defer_loading === undefined ? {} : { defer_loading: outer.defer_loading }),
    };
  });
}

/** One function's schema item of the "required" array (`_get_tool_schema_from_name_and_params`). */
function callSchema(tool: ToolDefinition): Record<string, unknown> {
  return {
    properties: {
      name: { type: "string", enum: [tool.function.name] },
      parameters: tool.function.parameters ?? { type: "object", properties: {} },
    },
    required: ["name", "parameters"],
  };
}

/**
 * The JSON schema the output is constrained to (vLLM's `get_json_schema_from_tools`), or undefined when
 * the choice leaves the output free: a named function → its parameters schema (the output is the
 * arguments object); "required" → `[{"name": …, "parameters": {…}}, …]` with at least one item, every
 * tool's `$defs` hoisted to the top (two tools defining one name differently is refused, as vLLM does).
 */
export function toolChoiceSchema(request: ToolRequest): Record<string, unknown> | undefined {
  const { tools, toolChoice } = request;
  if (tools === undefined || toolChoice === "none" || toolChoice === "auto") return undefined;
  if (typeof toolChoice === "object") {
    const tool = tools.find((t) => t.function.name === toolChoice.name);
    return (tool?.function.parameters ?? undefined) as Record<string, unknown> | undefined;
  }
  const defs: Record<string, unknown> = {};
  const items = tools.map((tool) => {
    const params = tool.function.parameters;
    if (params && typeof params.$defs === "object" && params.$defs !== null) {
      for (const [name, schema] of Object.entries(params.$defs as Record<string, unknown>)) {
        if (name in defs && JSON.stringify(defs[name]) !== JSON.stringify(schema)) {
          throw badRequest(
            `Tool definition '${name}' has multiple schemas, which is not supported.`,
            "tools",
          );
        }
        defs[name] = schema;
      }
      const { $defs: _hoisted, ...rest } = params;
      return callSchema({ ...tool, function: { ...tool.function, parameters: rest } });
    }
    return callSchema(tool);
  });
  const schema: Record<string, unknown> = {
    type: "array",
    minItems: 1,
    items: { type: "object", anyOf: items },
  };
  if (Object.keys(defs).length > 0) schema.$defs = defs;
  return schema;
}

/**
 * Messages as vLLM hands them to the template: absent content as "", an assistant's `tool_calls` arguments (a JSON string on the
 * wire) parsed back to objects, empty/absent ones `{}`, an empty `tool_calls` list dropped; the deprecated
 * `reasoning_content` read as `reasoning`, and an assistant's reasoning given as both keys.
 */
export function templateMessages(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((message, i) => {
    const m = message as Record<string, unknown>;
    // No content (an assistant that only calls tools) is "" for a string-content template, as vLLM parses it.
    if (m.content === null || m.content === undefined) m.content = "";
    if (m.reasoning_content !== undefined && m.reasoning_content !== null && (m.reasoning ?? null) === null) {
      m.reasoning = m.reasoning_content;
    }
    delete m.reasoning_content;
    if (m.role !== "assistant") {
      delete m.reasoning;
      return message;
    }
    if (typeof m.reasoning === "string") m.reasoning_content = m.reasoning;
    else delete m.reasoning;
    if (!("tool_calls" in m) || m.tool_calls === null || m.tool_calls === undefined) {
      delete m.tool_calls;
      return message;
    }
    if (!Array.isArray(m.tool_calls))
      throw badRequest(`messages[${i}].tool_calls must be a list`, "tool_calls");
    if (m.tool_calls.length === 0) {
      delete m.tool_calls;
      return message;
    }
    m.tool_calls = m.tool_calls.map((item) => {
      if (typeof item !== "object" || item === null || Array.isArray(item)) {
        throw badRequest("assistant tool_calls entries must be objects.", "tool_calls");
      }
      const call = { ...(item as Body) };
      const fn = call.function;
      if ((call.type ?? "function") !== "function" || typeof fn !== "object" || fn === null) {
        throw badRequest(
          "chat completions only support assistant tool_calls of type 'function'.",
          "tool_calls",
        );
      }
      const f = { ...(fn as Body) };
      const args = f.arguments;
      if (args === undefined || args === null || args === "") f.arguments = {};
      else if (typeof args === "string") {
        try {
          f.arguments = JSON.parse(args) ?? {};
        } catch {
          throw badRequest(`messages[${i}].tool_calls: function.arguments is not valid JSON`, "tool_calls");
        }
      }
      call.function = f;
      return call;
    });
    return message;
  });
}
