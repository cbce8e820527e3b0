import { VllmEngineCoreError } from "@vllm-engine-core/client";

/** An unknown `--tool-call-parser` name, or tool flags that do not go together. */
export class ToolParserError extends VllmEngineCoreError {
  override readonly name = "ToolParserError";
  readonly code = "TOOL_PARSER" as const;
}
