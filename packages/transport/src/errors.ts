import { VllmEngineCoreError } from "@vllm-engine-core/protocol";

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
