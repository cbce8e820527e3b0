// The rogue-engine fuzz scenario (CI test and `fuzz` script): for `seconds`, the rogue engine pushes random
// frames and mutations of valid output messages (bit flips, truncation, extra or missing aux frames) while
// requests run back to back on the same client and are checked token by token. Afterwards a fresh request
// must complete. Nothing may escape as an uncaught exception, and every error must be typed (has a `code`).
import { EngineCoreClient } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { drain, ipcAddress, removeIpcFiles, withTimeout } from "./harness.js";
import { startRogueEngine } from "./rogue-engine.js";
import type { FuzzStats } from "./rogue-protocol.js";
import { captureStderr } from "./stderr-capture.js";

export interface RogueFuzzReport {
  stats: FuzzStats;
  requests: number;
  tokenMismatches: string[];
  /** `name:code` of every error a stream, the health or a call reported. */
  typedErrors: string[];
  /** Errors without a string `code`. */
  untypedErrors: string[];
  uncaught: string[];
  /** Warning lines about undecodable messages (rate-limited: first one, then one summary per 10 s). */
  droppedWarnings: number;
  /** Undecodable messages those warnings account for, summaries included. */
  droppedReported: number;
  /** What `client.diagnostics()` counted. */
  diagnostics: {
    undecodable: number;
    afterAbort: number;
    afterFinish: number;
    unknownRequests: number;
    unknownUtilities: number;
    lastError: string | null;
  };
  healthyAtEnd: boolean;
  freshOk: boolean;
}

const describeError = (e: unknown) => {
  const err = e as { name?: string; code?: unknown; message?: string };
  return typeof err?.code === "string" ? `${err.name}:${err.code}` : undefined;
};

export async function runRogueFuzz(seconds: number, seed: number, options: { echoStderr?: boolean } = {}) {
  const uncaught: string[] = [];
  const onUncaught = (e: unknown) => uncaught.push(String((e as Error)?.stack ?? e));
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
  const stderr = captureStderr({ echo: options.echoStderr ?? false });
  const handshakeAddress = ipcAddress("rogue-fuzz");
  const engine = startRogueEngine({ handshakeAddress, stepMs: 2 });
  const typedErrors: string[] = [];
  const untypedErrors: string[] = [];
  const note = (e: unknown) => {
    const typed = describeError(e);
    if (typed) typedErrors.push(typed);
    else untypedErrors.push(String((e as Error)?.stack ?? e));
  };
  let client: EngineCoreClient | undefined;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, engineCount: 1, readyTimeoutMs: 20_000 },
    });
    const unsubscribe = client.onHealthChange(note);
    let fuzzing = true;
    const fuzzed = engine.fuzz(seconds, seed).finally(() => {
      fuzzing = false;
    });
    const tokenMismatches: string[] = [];
    let requests = 0;
    const check = async (requestId: string, maxTokens: number) => {
      const prompt = [4, 5, requestId.length];
      const stream = await client!.call({ requestId, promptTokenIds: prompt, samplingParams: { maxTokens } });
      const outcome = await withTimeout(drain(requestId, stream), 20_000, `request ${requestId}`);
      if (outcome.error) {
        note(outcome.error);
        return false;
      }
      const ok =
        JSON.stringify(outcome.tokens) === JSON.stringify(expectedTokens(requestId, prompt, maxTokens));
      if (!ok || outcome.finalOutputs !== 1 || outcome.afterFinal !== 0) tokenMismatches.push(requestId);
      return ok;
    };
    // Two lanes of back-to-back requests while the fuzzing runs.
    await Promise.all(
      [0, 1].map(async (lane) => {
        for (let i = 0; fuzzing; i++) {
          requests += 1;
          try {
            await check(`live-${lane}-${i}`, 40);
          } catch (e) {
            note(e);
            if (!client!.isHealthy) break;
          }
        }
      }),
    );
    const stats = await fuzzed;
    let freshOk = false;
    try {
      freshOk = await check("fresh-after-fuzz", 20);
    } catch (e) {
      note(e);
    }
    // Let the last rogue messages reach the runtime.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const diag = await client.diagnostics();
    const healthyAtEnd = client.isHealthy;
    unsubscribe(); // shutdown() reports ClientClosedError as a health change
    // Closing flushes the pending warning summary; give it time to reach this thread's stderr.
    await client.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return {
      stats,
      requests,
      tokenMismatches,
      typedErrors,
      untypedErrors,
      uncaught,
      droppedWarnings: stderr.droppedWarnings(),
      droppedReported: stderr.droppedReported(),
      diagnostics: {
        undecodable: diag.undecodableOutputMessages,
        afterAbort: diag.outputsAfterAbort,
        afterFinish: diag.outputsAfterFinish,
        unknownRequests: diag.outputsForUnknownRequests,
        unknownUtilities: diag.unknownUtilityReplies,
        lastError:
          diag.lastProtocolError === null
            ? null
            : `${diag.lastProtocolError.name}: ${diag.lastProtocolError.message}`,
      },
      healthyAtEnd,
      freshOk,
    } satisfies RogueFuzzReport;
  } finally {
    await client?.shutdown();
    await engine.stop();
    removeIpcFiles();
    stderr.restore();
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
  }
}
