// vLLM's tests/tool_parsers/test_deepseekv3_tool_parser.py (a common_tests config), ported.
import { deepseekV3 } from "../../src/tool-parsers/deepseek-v3.js";
import { commonToolParserTests } from "./common.js";

const B = "<｜tool▁calls▁begin｜>";
const C = "<｜tool▁call▁begin｜>";
const S = "<｜tool▁sep｜>";
const E = "<｜tool▁call▁end｜>";
const Z = "<｜tool▁calls▁end｜>";
const call = (name: string, args: string) => `${C}function${S}${name}\n\`\`\`json\n${args}\n\`\`\`${E}`;

commonToolParserTests({
  parser: deepseekV3,
  noToolCalls: "How can I help you today? I can check weather for you.",
  singleToolCall: `${B}${call("get_weather", '{"city": "Tokyo", "unit": "celsius"}')}${Z}`,
  parallelToolCalls: `${B}${call("get_weather", '{"city": "Tokyo", "unit": "celsius"}')}${call("search_hotels", '{"location": "Tokyo", "check_in": "2025-01-15"}')}${Z}`,
  variousDataTypes: `${B}${call(
    "test_function",
    '{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true, "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}',
  )}${Z}`,
  emptyArguments: `${B}${call("get_current_time", "{}")}${Z}`,
  surroundingText: `Let me check the weather for you.${B}${call("get_weather", '{"city": "Paris"}')}${Z}`,
  escapedStrings: `${B}${call("send_message", '{"text": "He said \\"hello\\"", "path": "C:\\\\Users\\\\file", "newline": "line1\\nline2"}')}${Z}`,
  malformed: [
    `${B}${C}function${S}get_weather\n\`\`\`json\n{"city": "Tokyo"\n\`\`\`${E}${Z}`,
    `${B}function${S}get_weather\n\`\`\`json\n{"city": "Tokyo"}\n\`\`\`${Z}`,
  ],
  singleName: "get_weather",
  singleArgs: { city: "Tokyo", unit: "celsius" },
  singleContent: null,
  parallelNames: ["get_weather", "search_hotels"],
  xfailNonStreaming: {},
});
