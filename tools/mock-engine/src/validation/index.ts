// The engine side of request decoding, written from vLLM's Python at the pin (one module per vLLM file,
// one function per __post_init__), independent of the client's validation.
export {
  type DecodedEngineCoreRequest,
  decodeEngineCoreRequest,
  recoverRequestId,
} from "./engine-core-request.js";
export { PythonError, type PythonErrorType } from "./python-errors.js";
