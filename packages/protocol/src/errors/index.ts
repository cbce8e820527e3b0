export { VllmEngineCoreError } from "./base.js";
export * from "./classes.js";
export {
  deserializeError,
  isSerializedError,
  registerErrorClass,
  type SerializedError,
  serializeError,
} from "./serialize.js";
export { RUNTIME_PROTOCOL_VERSION, RUNTIME_WORKER_MARKER } from "./thread.js";
