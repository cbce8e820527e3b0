// The codec keeps only its own error; the family's base and the thread crossing are
// @vllm-engine-core/errors.
export { ProtocolError, type ProtocolErrorOutcome } from "./classes.js";
