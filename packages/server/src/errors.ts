// HTTP errors in OpenAI's JSON shape, as vLLM's `ErrorResponse` / `ErrorInfo`
// (vllm/entrypoints/openai/engine/protocol.py): `{error: {message, type, param, code}}`, where vLLM's `code`
// is the HTTP status (an int), and `type` the exception class name vLLM's `create_error_response` writes.
import {
  ClientClosedError,
  EngineDeadError,
  InvalidRequestError,
  ProtocolError,
  RuntimeCrashedError,
  VllmEngineCoreError,
} from "@vllm-engine-core/client";
import { ChatTemplateError, InvalidTextOptionsError } from "@vllm-engine-core/text";

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

/** A request the server answers with an error status; the body is `toBody()`. */
export class OpenAIApiError extends VllmEngineCoreError {
  override readonly name = "OpenAIApiError";
  readonly code = "OPENAI_API_ERROR" as const;
  constructor(
    readonly status: number,
    /** vLLM's error type: BadRequestError, NotFoundError, ServiceUnavailableError, InternalServerError. */
    readonly type: string,
    message: string,
    /** The request parameter at fault (OpenAI's snake_case name), when there is one. */
    readonly param: string | null = null,
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

export function badRequest(message: string, param: string | null = null): OpenAIApiError {
  return new OpenAIApiError(400, "BadRequestError", message, param);
}

/** `samplingParams.maxTokens` → `max_tokens`; `promptTokenIds` → `prompt`. */
export function paramOfField(field: string): string {
  if (field === "promptTokenIds" || field.startsWith("promptTokenIds")) return "prompt";
  const last = field.replace(/^samplingParams\./, "").replace(/\[\d+\]$/, "");
  return last.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Any error thrown while serving → the status and body to answer with. */
export function toApiError(error: unknown): OpenAIApiError {
  if (error instanceof OpenAIApiError) return error;
  if (error instanceof InvalidRequestError) return badRequest(error.message, paramOfField(error.field));
  if (error instanceof InvalidTextOptionsError) return badRequest(error.message, paramOfField(error.field));
  if (error instanceof ChatTemplateError) return badRequest(error.message, "messages");
  if (
    error instanceof EngineDeadError ||
    error instanceof RuntimeCrashedError ||
    error instanceof ClientClosedError ||
    (error instanceof ProtocolError && error.outcome === "engine-dead")
  ) {
    return new OpenAIApiError(503, "ServiceUnavailableError", error.message);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new OpenAIApiError(500, "InternalServerError", message);
}

/** A `--lora-modules` value (ServerOptions.loraModules) that is neither `name=path` nor vLLM's JSON form. */
export class InvalidLoraModuleError extends VllmEngineCoreError {
  override readonly name = "InvalidLoraModuleError";
  readonly code = "INVALID_LORA_MODULE" as const;
  constructor(
    readonly value: string,
    reason: string,
  ) {
    super(
      `${reason}: ${value} (give \`name=path\` or {"name": …, "path": …, "base_model_name": …}, as vLLM's --lora-modules)`,
    );
  }
}

/** A ServerOptions value out of its range (it names the option, the value, and what it takes). */
export class InvalidServerOptionsError extends VllmEngineCoreError {
  override readonly name = "InvalidServerOptionsError";
  readonly code = "INVALID_SERVER_OPTIONS" as const;
  constructor(detail: string) {
    super(`${detail}. Fix the option and create the server again.`);
  }
}

/** Loading a `--lora-modules` adapter on the engines failed (vLLM's `init_static_loras` raises too). */
export class LoraLoadError extends VllmEngineCoreError {
  override readonly name = "LoraLoadError";
  readonly code = "LORA_LOAD_FAILED" as const;
  constructor(
    readonly loraName: string,
    detail: string,
  ) {
    super(
      `loading the LoRA adapter ${JSON.stringify(loraName)} on the engines failed: ${detail}; check its path ` +
        "and that the engines run with --enable-lora",
    );
  }
}
