// Request validation: every rule vLLM's engine applies while it decodes an ADD (and the few the client
// applies as vLLM's frontend), checked before anything is sent. See rules.ts for the table.
import type { CallRequest } from "../request.js";
import { Checker } from "./checker.js";
import { type RequestLimits, verifyEngineCoreRequest } from "./engine-core-request.js";
import { isPlainObject } from "./msgspec-types.js";
import { PIN_VERSION, type VllmVersion } from "./rules.js";

export {
  PIN_VERSION,
  REQUEST_RULES,
  type RuleSpec,
  type RuleStage,
  rulesFor,
  type VllmVersion,
} from "./rules.js";

export interface ValidateOptions extends RequestLimits {
  /** The engine's vLLM version whose rules apply (only the pinned revision is implemented). */
  vllmVersion?: VllmVersion;
}

/**
 * Throws `InvalidRequestError` (naming the field, the value and the rule) for a request that vLLM's
 * engine would fail to decode — which would kill the engine's input thread — or that this client
 * refuses as vLLM's frontend would. Returns normally for every request the engine accepts.
 */
export function validateRequest(
  request: CallRequest | unknown,
  options: ValidateOptions = {},
): asserts request is CallRequest {
  const version = options.vllmVersion ?? PIN_VERSION;
  if (!isPlainObject(request)) new Checker(undefined, version).fail("client.request", "request", request);
  const id = (request as Record<string, unknown>).requestId;
  const c = new Checker(typeof id === "string" ? id : undefined, version);
  verifyEngineCoreRequest(c, request as Record<string, unknown>, options);
}
