// The rogue-engine fuzz scenario (CI test and `fuzz` script): the rogue engine pushes random frames and
// mutations of valid output messages (bit flips, truncation, extra or missing aux frames) while requests run
// back to back on the same client and are checked token by token. Two phases, half the time each:
// 1. decodable only: the engine sends only the fuzzed messages the client's decoder accepts (well-formed but
//    unexpected traffic: unknown ids, stray finishes, unknown call ids). That must fail nothing: every
//    request exact, the client healthy, a fresh request completes.
// 2. anything: an undecodable message now fails what it concerns, and garbage kills its engine (see the
//    runtime's output-faults.ts), so this phase runs in rounds, each against a fresh rogue engine and
//    client, until time is up. Every stream must end (none hangs): complete with exactly the expected
//    tokens, or fail with a typed error having received a prefix of them (garbage is never delivered as
//    tokens); once the engine is dead, new work must fail fast with the health error.
// Throughout, nothing may escape as an uncaught exception and every error must be typed (has a `code`);
// every undecodable message the runtime counted must be accounted for by its rate-limited warnings.
import { EngineCoreClient, type EngineCoreOutput } from "@vllm-engine-core/client";
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { drain, ipcAddress, removeIpcFiles, sleep, withTimeout } from "./harness.js";
import { startRogueEngine } from "./rogue-engine.js";
import type { FuzzStats } from "./rogue-protocol.js";
import { captureStderr } from "./stderr-capture.js";

export interface PhaseReport {
  rounds: number;
  /** Rounds whose engine was declared dead (health error set). */
  deadRounds: number;
  stats: FuzzStats;
  requests: number;
  completed: number;
  /** Streams that ended with an error, by `name:code` (and ProtocolError outcome). */
  failedBy: Record<string, number>;
  /** Requests whose tokens differ from the expected ones (or that got more than one final output). */
  tokenMismatches: string[];
  /** Requests that did not end within 20 s. */
  hung: string[];
  /** A healthy client's fresh request after the fuzzing completed exactly, in every round. */
  freshOk: boolean;
  /** Unhealthy at the end of a round, but a new call did not fail at once with the health error. */
  failFastViolations: string[];
  healthyAtEnd: boolean;
  diagnostics: {
    undecodable: number;
    requestsFailed: number;
    utilityCallsFailed: number;
    enginesDead: number;
    afterAbort: number;
    afterFinish: number;
    unknownRequests: number;
    unknownUtilities: number;
  };
}

export interface RogueFuzzReport {
  seed: number;
  decodable: PhaseReport;
  undecodable: PhaseReport;
  /** `name:code` of every error a stream, the health or a call reported. */
  typedErrors: string[];
  /** Errors without a string `code`. */
  untypedErrors: string[];
  uncaught: string[];
  /** Warning lines about undecodable messages (rate-limited per connection: the first, then summaries). */
  droppedWarnings: number;
  /** Undecodable messages those warnings account for, summaries included. */
  droppedReported: number;
}

const typedName = (e: unknown) => {
  const err = e as { name?: string; code?: unknown; outcome?: unknown };
  if (typeof err?.code !== "string") return undefined;
  return `${err.name}:${err.code}${typeof err.outcome === "string" ? `:${err.outcome}` : ""}`;
};

function emptyPhase(seed: number): PhaseReport {
  return {
    rounds: 0,
    deadRounds: 0,
    stats: { seed, sent: 0, random: 0, mutated: 0, empty: 0, discarded: 0 },
    requests: 0,
    completed: 0,
    failedBy: {},
    tokenMismatches: [],
    hung: [],
    freshOk: true,
    failFastViolations: [],
    healthyAtEnd: true,
    diagnostics: {
      undecodable: 0,
      requestsFailed: 0,
      utilityCallsFailed: 0,
      enginesDead: 0,
      afterAbort: 0,
      afterFinish: 0,
      unknownRequests: 0,
      unknownUtilities: 0,
    },
  };
}

export async function runRogueFuzz(
  seconds: number,
  seed: number,
  options: { echoStderr?: boolean } = {},
): Promise<RogueFuzzReport> {
  const uncaught: string[] = [];
  const onUncaught = (e: unknown) => uncaught.push(String((e as Error)?.stack ?? e));
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
  const stderr = captureStderr({ echo: options.echoStderr ?? false });
  const typedErrors: string[] = [];
  const untypedErrors: string[] = [];
  const note = (e: unknown) => {
    const typed = typedName(e);
    if (typed) typedErrors.push(typed);
    else untypedErrors.push(String((e as Error)?.stack ?? e));
  };
  try {
    const decodable = emptyPhase(seed);
    await fuzzRound(decodable, seconds / 2, seed, true, note);
    const undecodable = emptyPhase(seed + 1);
    const end = performance.now() + (seconds / 2) * 1000;
    for (let round = 0; round === 0 || performance.now() < end; round++) {
      await fuzzRound(undecodable, Math.min(1, seconds / 2), seed + 1 + round, false, note);
    }
    // Closing each client flushed its pending warning summary; give it time to reach this thread's stderr.
    await sleep(200);
    return {
      seed,
      decodable,
      undecodable,
      typedErrors,
      untypedErrors,
      uncaught,
      droppedWarnings: stderr.droppedWarnings(),
      droppedReported: stderr.droppedReported(),
    };
  } finally {
    removeIpcFiles();
    stderr.restore();
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
  }
}

/** One fresh rogue engine and client: two lanes of requests while the engine fuzzes for `seconds`. */
async function fuzzRound(
  phase: PhaseReport,
  seconds: number,
  seed: number,
  decodableOnly: boolean,
  note: (e: unknown) => void,
): Promise<void> {
  phase.rounds += 1;
  const handshakeAddress = ipcAddress("rogue-fuzz");
  const engine = startRogueEngine({ handshakeAddress, stepMs: 2 });
  let client: EngineCoreClient | undefined;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, engineCount: 1, readyTimeoutMs: 20_000 },
    });
    const c = client;
    const unsubscribe = c.onHealthChange(note);
    let fuzzing = true;
    // Undecodable traffic usually kills the engine within milliseconds: let the first streams get going.
    const fuzzed = sleep(decodableOnly ? 0 : 50)
      .then(() => engine.fuzz(seconds, seed, { decodableOnly }))
      .finally(() => {
        fuzzing = false;
      });
    const run = async (requestId: string, maxTokens: number): Promise<boolean> => {
      phase.requests += 1;
      const prompt = [4, 5, requestId.length];
      const expected = expectedTokens(requestId, prompt, maxTokens);
      const stream = await c.call({ requestId, promptTokenIds: prompt, samplingParams: { maxTokens } });
      let outcome: Awaited<ReturnType<typeof drain>>;
      try {
        outcome = await withTimeout(
          drain(requestId, stream as AsyncIterable<EngineCoreOutput>),
          20_000,
          requestId,
        );
      } catch {
        phase.hung.push(requestId);
        return false;
      }
      const got = JSON.stringify(outcome.tokens);
      if (outcome.error) {
        note(outcome.error);
        const name = typedName(outcome.error) ?? "untyped";
        phase.failedBy[name] = (phase.failedBy[name] ?? 0) + 1;
        // What arrived before the failure is the start of the right answer, never decoded garbage.
        if (got !== JSON.stringify(expected.slice(0, outcome.tokens.length)))
          phase.tokenMismatches.push(requestId);
        return false;
      }
      phase.completed += 1;
      if (got !== JSON.stringify(expected) || outcome.finalOutputs !== 1 || outcome.afterFinal !== 0)
        phase.tokenMismatches.push(requestId);
      return got === JSON.stringify(expected);
    };
    // Two lanes of back-to-back requests while the fuzzing runs (or until the engine is declared dead).
    await Promise.all(
      [0, 1].map(async (lane) => {
        for (let i = 0; fuzzing && c.isHealthy; i++) {
          try {
            await run(`live-${phase.rounds}-${lane}-${i}`, 40);
          } catch (e) {
            note(e);
          }
        }
      }),
    );
    const stats = await fuzzed;
    for (const key of ["sent", "random", "mutated", "empty", "discarded"] as const)
      phase.stats[key] += stats[key];
    // Let the last rogue messages reach the runtime.
    await sleep(200);
    if (c.isHealthy) {
      try {
        if (!(await run(`fresh-after-fuzz-${phase.rounds}`, 20))) phase.freshOk = false;
      } catch (e) {
        note(e);
        phase.freshOk = false;
      }
    } else {
      phase.deadRounds += 1;
      const started = performance.now();
      try {
        await c.call({
          requestId: `after-death-${phase.rounds}`,
          promptTokenIds: [1],
          samplingParams: { maxTokens: 3 },
        });
        phase.failFastViolations.push(`round ${phase.rounds}: a call after the engine died was accepted`);
      } catch (e) {
        if (e !== c.healthError || performance.now() - started > 1000)
          phase.failFastViolations.push(`round ${phase.rounds}: ${String(e)}`);
      }
    }
    const d = await c.diagnostics();
    phase.healthyAtEnd &&= c.isHealthy;
    const sums = phase.diagnostics;
    sums.undecodable += d.undecodableOutputMessages;
    sums.requestsFailed += d.requestsFailedByProtocolError;
    sums.utilityCallsFailed += d.utilityCallsFailedByProtocolError;
    sums.enginesDead += d.enginesDeadByProtocolError;
    sums.afterAbort += d.outputsAfterAbort;
    sums.afterFinish += d.outputsAfterFinish;
    sums.unknownRequests += d.outputsForUnknownRequests;
    sums.unknownUtilities += d.unknownUtilityReplies;
    unsubscribe(); // shutdown() reports ClientClosedError as a health change
  } finally {
    await client?.shutdown();
    await engine.stop();
    removeIpcFiles();
  }
}
