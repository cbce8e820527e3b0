import { VllmEngineCoreError } from "@vllm-engine-core/protocol";

/**
 * The transport configuration is invalid (caught before any socket is opened).
 * Transport-local: it crosses threads by name and message only (not registered in the protocol package).
 */
export class InvalidTransportConfigError extends VllmEngineCoreError {
  override readonly name = "InvalidTransportConfigError";
  readonly code = "INVALID_TRANSPORT_CONFIG" as const;
  readonly field: string;
  readonly detail: string;
  constructor(options: { field: string; detail: string }) {
    super(
      `Invalid transport configuration at ${options.field}: ${options.detail}. Fix that setting and connect again.`,
    );
    this.field = options.field;
    this.detail = options.detail;
  }
}

/** The transport API was used in a way it does not support (e.g. a second output loop, an empty message). */
export class TransportUsageError extends VllmEngineCoreError {
  override readonly name = "TransportUsageError";
  readonly code = "TRANSPORT_USAGE" as const;
  readonly detail: string;
  constructor(options: { detail: string }) {
    super(`Transport misuse: ${options.detail}. This is a bug in the caller (the runtime worker).`);
    this.detail = options.detail;
  }
}
