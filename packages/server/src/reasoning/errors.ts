import { VllmEngineCoreError } from "@vllm-engine-core/client";

/** A reasoning parser that cannot serve this model, or an unknown `--reasoning-parser` name. */
export class ReasoningParserError extends VllmEngineCoreError {
  override readonly name = "ReasoningParserError";
  readonly code = "REASONING_PARSER" as const;
}
