// What a connection noticed about its engines' output stream: undecodable messages (and what they cost:
// streams, utility calls and engines failed with a ProtocolError), outputs for request ids that are not
// live, utility replies nobody waits for. Counted for
// `diagnostics()`; the anomalies (all but outputs that trail an abort) are also logged as process warnings,
// at most one per kind per interval, so a misbehaving engine can't flood stderr (a 10 s fuzz run used to
// print ~24,000 lines).

import type { SerializedError } from "@vllm-engine-core/errors";
import { serializeError } from "@vllm-engine-core/errors";
import type { ProtocolError } from "@vllm-engine-core/protocol";
import type { ConnectionDiagnosticsWire } from "../messages.js";
import type { EndedHow } from "./recently-ended.js";

/** At most one warning per kind per this many ms; the ones in between are summed into the next. */
export const WARNING_INTERVAL_MS = 10_000;

export class OutputDiagnostics {
  readonly #counts: Omit<ConnectionDiagnosticsWire, "lastProtocolError"> = {
    undecodableOutputMessages: 0,
    outputsAfterAbort: 0,
    outputsAfterFinish: 0,
    outputsForUnknownRequests: 0,
    unknownUtilityReplies: 0,
    lateUtilityReplies: 0,
    requestsFailedByProtocolError: 0,
    utilityCallsFailedByProtocolError: 0,
    enginesDeadByProtocolError: 0,
  };
  #lastProtocolError: SerializedError | null = null;
  readonly #badMessageWarning = new RateLimitedWarning("VLLM_UNDECODABLE_OUTPUT");
  readonly #strayOutputWarning = new RateLimitedWarning("VLLM_STRAY_OUTPUT");
  readonly #utilityWarning = new RateLimitedWarning("VLLM_UNKNOWN_UTILITY_REPLY");

  badMessage(error: ProtocolError): void {
    this.#counts.undecodableOutputMessages++;
    this.#lastProtocolError = serializeError(error);
    this.#badMessageWarning.emit(
      `vllm-engine-core: dropped an undecodable engine output message: ${error.message}`,
    );
  }

  /** What an undecodable message cost (see output-faults.ts). */
  failedByProtocolError(cost: { requests?: number; utilityCalls?: number; engines?: number }): void {
    this.#counts.requestsFailedByProtocolError += cost.requests ?? 0;
    this.#counts.utilityCallsFailedByProtocolError += cost.utilityCalls ?? 0;
    this.#counts.enginesDeadByProtocolError += cost.engines ?? 0;
  }

  /** An output for a request id that is not live; `ended` says how the id ended, if it did lately. */
  outputForInactiveRequest(requestId: string, ended: EndedHow | undefined, engineIndex: number): void {
    if (ended === "aborted") {
      // The engine had it in flight when the abort went out; vLLM drops these too.
      this.#counts.outputsAfterAbort++;
    } else if (ended === "finished") {
      this.#counts.outputsAfterFinish++;
      this.#strayOutputWarning.emit(
        `vllm-engine-core: engine ${engineIndex} sent an output for request ${JSON.stringify(requestId)} after its final output; it was dropped`,
      );
    } else {
      this.#counts.outputsForUnknownRequests++;
      this.#strayOutputWarning.emit(
        `vllm-engine-core: engine ${engineIndex} sent an output for request ${JSON.stringify(requestId)}, which this connection does not know (never sent, or ended long ago); it was dropped`,
      );
    }
  }

  unknownUtilityReply(engineIndex: number, callId: bigint): void {
    this.#counts.unknownUtilityReplies++;
    this.#utilityWarning.emit(
      `vllm-engine-core: engine ${engineIndex} answered utility call ${callId}, which no caller is waiting for ` +
        "(already answered, rolled back, or never made by this client); the reply was dropped",
    );
  }

  /** A reply to a utility call whose caller gave up (timeout, abort): expected, so not logged. */
  lateUtilityReply(): void {
    this.#counts.lateUtilityReplies++;
  }

  snapshot(): ConnectionDiagnosticsWire {
    return { ...this.#counts, lastProtocolError: this.#lastProtocolError };
  }

  close(): void {
    this.#badMessageWarning.close();
    this.#strayOutputWarning.close();
    this.#utilityWarning.close();
  }
}

/** process.emitWarning, at most once per interval; suppressed ones are summed into one later warning. */
export class RateLimitedWarning {
  readonly #code: string;
  readonly #intervalMs: number;
  #quietUntil = 0;
  #suppressed = 0;
  #latest = "";
  #flushTimer: NodeJS.Timeout | undefined;

  constructor(code: string, intervalMs = WARNING_INTERVAL_MS) {
    this.#code = code;
    this.#intervalMs = intervalMs;
  }

  emit(message: string): void {
    const now = performance.now();
    if (now >= this.#quietUntil && this.#suppressed === 0) {
      this.#quietUntil = now + this.#intervalMs;
      process.emitWarning(message, { code: this.#code });
      return;
    }
    this.#suppressed++;
    this.#latest = message;
    // Unref'd: a pending summary must not keep the runtime thread alive.
    this.#flushTimer ??= setTimeout(() => this.#flush(), Math.max(0, this.#quietUntil - now)).unref();
  }

  /** Emits the pending summary now, so no suppressed count is lost when the connection closes. */
  close(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#suppressed > 0) this.#flush();
  }

  #flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const count = this.#suppressed;
    this.#suppressed = 0;
    this.#quietUntil = performance.now() + this.#intervalMs;
    process.emitWarning(
      `${count} more like this in the last ${this.#intervalMs / 1000} s; the latest: ${this.#latest}`,
      { code: this.#code },
    );
  }
}
