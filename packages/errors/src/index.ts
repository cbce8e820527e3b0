export { VllmEngineCoreError } from "./base.js";
export {
  deserializeError,
  type ErrorClass,
  errorClassFor,
  isSerializedError,
  registerErrorClass,
  type SerializedError,
  serializeError,
} from "./registry.js";
export * from "./runtime.js";
export * from "./transport.js";
