// Request validation: every rule vLLM's engine applies while it decodes an ADD (and the few the client
// applies as vLLM's frontend), checked before anything is sent. See rules.ts for the table.
import type { CallRequest } from "../request.js";
import { Checker } from "./checker.js";
import { type RequestLimits, verifyEngineCoreRequest } from "./engine-core-request.js";
import { isPlainObject } from "./msgspec-types.js";
import { PIN_VERSION, type VllmVersion } from "./rules.js";

export { PIN_VERSION, type VllmVersion } from "./rules.js";

export interface ValidateOptions extends RequestLimits {
  /**
   * The engine's vLLM version whose rules apply (default: the pinned revision), or several: the
   * request must then be valid for every one of them (an engine whose exact version is not known, or
   * several engines any of which may get the request). See `possibleVersions` in the protocol package.
   */
  vllmVersion?: VllmVersion | readonly VllmVersion[];
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
  const given = options.vllmVersion ?? PIN_VERSION;
  const versions: readonly VllmVersion[] = typeof given === "string" ? [given] : given;
  if (versions.length === 0) throw new RangeError("validateRequest: vllmVersion is an empty list");
  if (!isPlainObject(request)) new Checker(undefined, versions).fail("client.request", "request", request);
  const id = (request as Record<string, unknown>).requestId;
  const c = new Checker(typeof id === "string" ? id : undefined, versions);
  verifyEngineCoreRequest(c, request as Record<string, unknown>, options);
}
