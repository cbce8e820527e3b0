// The comparison half of the differential test (differential.test.ts): turns what our client saw from
// one engine (vLLM's real engine core, or the mock engine) into an observation in which only what may
// legitimately differ between the two engines is normalized away, and diffs two observations.
//
// Normalized away, and why:
// - timestamps (events, EngineCoreOutputs.timestamp) and arrival times: clocks, not behaviour; events keep
//   their types and order;
// - logprob VALUES and the top-k ids after column 0: both engines make them up (the model-free executor
//   gives the sampled token rank 1 and logprob -0.25, the mock a per-position permutation), so only shapes,
//   dtypes and "column 0 is the token" are compared;
// - SchedulerStats values that depend on timing or on the block pool size (kv_cache_usage, prefix-cache
//   query counts, which requests shared a step): the field set, the types and sanity ranges are compared.
import type { EngineCoreOutput, SchedulerStats } from "@vllm-engine-core/client";

interface TensorLike {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly data: ArrayLike<number | bigint>;
}

/** dtype and shape of a tensor; its values are left out. */
function tensorShape(t: TensorLike | null | undefined): string | null {
  return t ? `${t.dtype}[${t.shape.join(",")}]` : null;
}

/** Column 0 of each row of a [rows, cols] id tensor. */
function firstColumn(t: TensorLike): number[] {
  const [rows = 0, cols = 1] = t.shape;
  return Array.from({ length: rows }, (_, r) => Number(t.data[r * cols]));
}

/** One EngineCoreOutput as the client delivered it, with engine-made values replaced by their shapes. */
export interface OutputShape {
  readonly newTokenIds: readonly number[];
  readonly finishReason: number | null;
  readonly stopReason: number | string | null;
  /** Keys whose value is set (not null/undefined), sorted: optional fields present vs absent. */
  readonly presentKeys: readonly string[];
  readonly newLogprobs: {
    readonly ids: string | null;
    readonly logprobs: string | null;
    readonly ranks: string | null;
    /** Column 0 of every row is the sampled token. */
    readonly sampledFirst: boolean;
    readonly cuNumGeneratedTokens: unknown;
  } | null;
  readonly promptLogprobs: {
    readonly ids: string | null;
    readonly logprobs: string | null;
    readonly ranks: string | null;
    /** Column 0 of row i is prompt token i + 1. */
    readonly promptFirst: boolean;
  } | null;
  /** Event types in order (timestamps dropped). */
  readonly events: readonly number[] | null;
  readonly prefillStats: unknown;
  readonly kvTransferParams: unknown;
  readonly traceHeaders: unknown;
  readonly numNansInLogits: number;
}

export function outputShape(output: EngineCoreOutput, promptTokenIds: readonly number[]): OutputShape {
  const o = output as unknown as Record<string, unknown>;
  const presentKeys = Object.keys(o)
    .filter((k) => o[k] !== null && o[k] !== undefined)
    .sort();
  const lp = output.newLogprobs;
  const plp = output.newPromptLogprobsTensors;
  return {
    newTokenIds: [...output.newTokenIds],
    finishReason: output.finishReason ?? null,
    stopReason: output.stopReason ?? null,
    presentKeys,
    newLogprobs: lp
      ? {
          ids: tensorShape(lp.logprobTokenIds),
          logprobs: tensorShape(lp.logprobs),
          ranks: tensorShape(lp.sampledTokenRanks),
          sampledFirst:
            JSON.stringify(firstColumn(lp.logprobTokenIds)) === JSON.stringify(output.newTokenIds),
          cuNumGeneratedTokens: lp.cuNumGeneratedTokens ?? null,
        }
      : null,
    promptLogprobs: plp
      ? {
          ids: tensorShape(plp.logprobTokenIds),
          logprobs: tensorShape(plp.logprobs),
          ranks: tensorShape(plp.selectedTokenRanks),
          promptFirst:
            JSON.stringify(firstColumn(plp.logprobTokenIds)) === JSON.stringify(promptTokenIds.slice(1)),
        }
      : null,
    events: output.events ? output.events.map((e) => e.type) : null,
    prefillStats: output.prefillStats ?? null,
    kvTransferParams: output.kvTransferParams ?? null,
    traceHeaders: output.traceHeaders ?? null,
    numNansInLogits: output.numNansInLogits ?? 0,
  };
}

/** What a client saw for one request: every output's shape, or the error the call ended with. */
export interface RequestObservation {
  readonly kind: "request";
  readonly outputs: readonly OutputShape[];
  readonly tokenIds: readonly number[];
  readonly finishReason: number | null;
  readonly stopReason: number | string | null;
  readonly error: ErrorObservation | null;
}

export interface ErrorObservation {
  readonly name: string;
  readonly code: string | undefined;
  readonly message: string;
  /** UtilityCallError.failureMessage: the engine's own text. */
  readonly failureMessage?: string;
}

export function errorObservation(error: unknown): ErrorObservation {
  const e = error as { name?: string; code?: string; message?: string; failureMessage?: string };
  return {
    name: e.name ?? typeof error,
    code: e.code,
    message: e.message ?? String(error),
    ...(e.failureMessage === undefined ? {} : { failureMessage: e.failureMessage }),
  };
}

export interface UtilityObservation {
  readonly kind: "utility";
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: ErrorObservation;
}

export type Observation = RequestObservation | UtilityObservation;

/** A JSON-able copy (bigints as strings, Maps and Sets as arrays/objects) for deep comparison and messages. */
export function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v) => {
      if (typeof v === "bigint") return `${v}n`;
      if (v instanceof Map) return Object.fromEntries(v);
      if (v instanceof Set) return [...v];
      return v;
    }),
  );
}

/** Paths at which two JSON-able values differ ("" = the root), each with both values. */
export function diff(a: unknown, b: unknown, path = ""): { path: string; real: unknown; mock: unknown }[] {
  if (Object.is(a, b)) return [];
  const bothObjects = typeof a === "object" && typeof b === "object" && a !== null && b !== null;
  if (!bothObjects || Array.isArray(a) !== Array.isArray(b)) return [{ path, real: a, mock: b }];
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length) {
    return [{ path: `${path}.length`, real: a, mock: b }];
  }
  const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
  return [...keys].flatMap((k) =>
    diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`),
  );
}

/** The type of every SchedulerStats field ("null", "int", "float", "bool", "object", "array"). */
export function statsSignature(stats: SchedulerStats): Record<string, string> {
  const typeOf = (v: unknown): string => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "number") return Number.isInteger(v) ? "number" : "number"; // 0.0 decodes as an int
    if (Array.isArray(v)) return "array";
    return typeof v;
  };
  const s = stats as unknown as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const key of Object.keys(s).sort()) {
    out[key] = typeOf(s[key]);
    const v = s[key];
    if (v && typeof v === "object" && !Array.isArray(v) && key === "prefixCacheStats") {
      for (const [k, inner] of Object.entries(v)) out[`${key}.${k}`] = typeOf(inner);
    }
  }
  return out;
}

/** Sanity of one SchedulerStats snapshot: counts are non-negative integers, usage a fraction. */
export function statsInsanity(stats: SchedulerStats): string[] {
  const problems: string[] = [];
  const count = (name: string, v: number) => {
    if (!Number.isInteger(v) || v < 0) problems.push(`${name} = ${v}`);
  };
  count("numRunningReqs", stats.numRunningReqs);
  count("numWaitingReqs", stats.numWaitingReqs);
  count("numSkippedWaitingReqs", stats.numSkippedWaitingReqs);
  if (!(stats.kvCacheUsage >= 0 && stats.kvCacheUsage <= 1))
    problems.push(`kvCacheUsage = ${stats.kvCacheUsage}`);
  const p = stats.prefixCacheStats;
  count("prefixCacheStats.requests", p.requests);
  count("prefixCacheStats.queries", p.queries);
  count("prefixCacheStats.hits", p.hits);
  if (p.hits > p.queries) problems.push(`prefix hits ${p.hits} > queries ${p.queries}`);
  return problems;
}
