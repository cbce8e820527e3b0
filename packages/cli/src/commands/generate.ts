// `generate`: one request per --prompt-token-ids (run concurrently), sampling flags spelled as vLLM's CLI
// spells them, token ids streamed as they arrive, then each request's finish reason and timings.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import {
  type EngineCoreOutput,
  type EngineCoreOutputStream,
  FinishReason,
  finishReasonName,
  type SamplingParamsInit,
} from "@vllm-engine-core/client";
import { bool, type FlagSpec, int, list, num, type ParsedArgs, str, tokenIds } from "../args.js";
import type { Command } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { CliRuntimeError, CliUsageError, EXIT_OK } from "../errors.js";
import { ms, toJson } from "../format.js";

const CMD = "generate";

export const SAMPLING_FLAGS: FlagSpec[] = [
  {
    name: "max-tokens",
    type: "string",
    value: "N",
    help: "tokens to generate per request (default 16, as vLLM)",
  },
  { name: "min-tokens", type: "string", value: "N", help: "tokens before a stop rule may end the request" },
  { name: "temperature", type: "string", value: "F", help: "sampling temperature (>= 0)" },
  { name: "top-p", type: "string", value: "F", help: "nucleus sampling probability, in (0, 1]" },
  { name: "top-k", type: "string", value: "N", help: "top-k sampling (0 or -1 = off)" },
  {
    name: "presence-penalty",
    type: "string",
    value: "F",
    help: "penalty on tokens already in the output, in [-2, 2]",
  },
  {
    name: "frequency-penalty",
    type: "string",
    value: "F",
    help: "penalty by each token's count in the output, in [-2, 2]",
  },
  { name: "seed", type: "string", value: "N", help: "per-request sampling seed" },
  {
    name: "stop-token-ids",
    type: "string",
    value: "IDS",
    help: "comma-separated token ids that stop generation",
  },
  { name: "ignore-eos", type: "boolean", help: "keep generating past the EOS token" },
  {
    name: "logprobs",
    type: "string",
    value: "N",
    help: "return the top N logprobs per token (-1 = whole vocabulary)",
  },
];

/** SamplingParams from the vLLM-spelled flags; only the flags given are written (sparse, as the client sends). */
export function samplingFromFlags(args: ParsedArgs, command: string): SamplingParamsInit {
  const sp: SamplingParamsInit = { maxTokens: int(args, command, "max-tokens", { min: 1 }) ?? 16 };
  const minTokens = int(args, command, "min-tokens", { min: 0 });
  if (minTokens !== undefined) sp.minTokens = minTokens;
  const temperature = num(args, command, "temperature", { ok: (n) => n >= 0, expected: "a number >= 0" });
  if (temperature !== undefined) sp.temperature = temperature;
  const topP = num(args, command, "top-p", { ok: (n) => n > 0 && n <= 1, expected: "a number in (0, 1]" });
  if (topP !== undefined) sp.topP = topP;
  const topK = int(args, command, "top-k", { min: -1 });
  if (topK !== undefined) sp.topK = topK;
  for (const [flag, key] of [
    ["presence-penalty", "presencePenalty"],
    ["frequency-penalty", "frequencyPenalty"],
  ] as const) {
    // vLLM's SamplingParams._verify_args range.
    const penalty = num(args, command, flag, {
      ok: (n) => n >= -2 && n <= 2,
      expected: "a number in [-2, 2]",
    });
    if (penalty !== undefined) sp[key] = penalty;
  }
  const seed = int(args, command, "seed");
  if (seed !== undefined) sp.seed = seed;
  const stop = str(args, "stop-token-ids");
  if (stop !== undefined) sp.stopTokenIds = tokenIds(command, "stop-token-ids", stop, true);
  if (bool(args, "ignore-eos")) sp.ignoreEos = true;
  const logprobs = int(args, command, "logprobs", { min: -1 });
  if (logprobs !== undefined) sp.logprobs = logprobs;
  return sp;
}

interface TokenLogprobs {
  /** Column 0 is the sampled token, then the top-N tokens. */
  tokenIds: number[];
  logprobs: number[];
  /** Rank of the sampled token. */
  rank: number;
}

/** The rows of `newLogprobs` (one per new token) as plain numbers. */
function logprobRows(output: EngineCoreOutput): TokenLogprobs[] | undefined {
  const lp = output.newLogprobs;
  if (lp == null) return undefined;
  const [rows = 0, width = 0] = lp.logprobTokenIds.shape;
  const ids = Array.from(lp.logprobTokenIds.data as ArrayLike<number | bigint>, Number);
  const values = Array.from(lp.logprobs.data as ArrayLike<number | bigint>, Number);
  const ranks = Array.from(lp.sampledTokenRanks.data as ArrayLike<number | bigint>, Number);
  return Array.from({ length: rows }, (_, r) => ({
    tokenIds: ids.slice(r * width, (r + 1) * width),
    logprobs: values.slice(r * width, (r + 1) * width),
    rank: ranks[r] ?? 0,
  }));
}

interface RequestResult {
  index: number;
  requestId: string;
  engineIndex: number;
  tokens: number;
  finishReason: string;
  stopReason: number | string | null;
  ttftS: number;
  e2eS: number;
}

export const generateCommand: Command = {
  spec: {
    name: CMD,
    summary:
      "send prompts (token ids), stream the generated token ids, then print finish reasons and timings",
    connects: true,
    flags: [
      {
        name: "prompt-token-ids",
        type: "string",
        multiple: true,
        value: "IDS",
        help: "prompt as comma-separated token ids; repeat for several concurrent requests",
      },
      ...SAMPLING_FLAGS,
      {
        name: "request-id",
        type: "string",
        value: "ID",
        help: "request id (with several prompts: ID-0, ID-1, …; default cli-<random>-i)",
      },
      {
        name: "json",
        type: "boolean",
        help: "one JSON line per output (the last one of a request carries its totals)",
      },
    ],
    notes: [
      "Output: with one prompt the token ids stream on one line; with several, each output is a line",
      "`[i] ids…`. Then one line per request: engine, tokens, finish reason (stop reason), TTFT, TPOT, total.",
    ],
  },
  async run({ args, lifecycle, out }) {
    const prompts = list(args, "prompt-token-ids").map((raw) => tokenIds(CMD, "prompt-token-ids", raw));
    if (prompts.length === 0) {
      throw new CliUsageError("`generate` needs --prompt-token-ids, e.g. --prompt-token-ids 1,2,3", CMD);
    }
    const samplingParams = samplingFromFlags(args, CMD);
    const json = bool(args, "json");
    const { client } = await openSession(planConnection(args, CMD), lifecycle, out.notice);

    const single = prompts.length === 1;
    const requestId = str(args, "request-id");
    const idOf = (index: number) =>
      requestId === undefined ? `cli-${batch}-${index}` : single ? requestId : `${requestId}-${index}`;
    const batch = randomUUID().slice(0, 8);
    const started = performance.now();
    // Submit every request first (they run concurrently on the engines), then read the streams.
    const streams: EngineCoreOutputStream[] = [];
    for (const [index, promptTokenIds] of prompts.entries()) {
      streams.push(
        await client.call(
          { requestId: idOf(index), promptTokenIds, samplingParams },
          { signal: lifecycle.signal },
        ),
      );
    }
    const results = await Promise.all(
      streams.map(async (stream, index): Promise<RequestResult> => {
        let tokens = 0;
        let first = 0;
        let last: EngineCoreOutput | undefined;
        for await (const output of stream) {
          const now = performance.now();
          if (first === 0 && output.newTokenIds.length > 0) first = now;
          tokens += output.newTokenIds.length;
          last = output;
          const rows = logprobRows(output);
          const done = output.finishReason != null;
          if (json) {
            out.line(
              toJson({
                index,
                requestId: stream.requestId,
                engineIndex: stream.engineIndex,
                newTokenIds: output.newTokenIds,
                ...(rows ? { logprobs: rows } : {}),
                finishReason: done ? finishReasonName(output.finishReason!) : null,
                stopReason: output.stopReason ?? null,
                elapsedMs: Number((now - started).toFixed(3)),
                ...(done
                  ? {
                      numTokens: tokens,
                      ttftMs: first ? Number((first - started).toFixed(3)) : null,
                      e2eMs: Number((now - started).toFixed(3)),
                    }
                  : {}),
              }),
            );
          } else if (output.newTokenIds.length > 0) {
            const text = output.newTokenIds
              .map((id, i) => (rows?.[i] ? `${id}(${rows[i]!.logprobs[0]!.toFixed(3)})` : String(id)))
              .join(" ");
            if (single) out.write(`${tokens === output.newTokenIds.length ? "" : " "}${text}`);
            else out.line(`[${index}] ${text}`);
          }
        }
        const end = performance.now();
        return {
          index,
          requestId: stream.requestId,
          engineIndex: stream.engineIndex,
          tokens,
          finishReason: last?.finishReason == null ? "none" : finishReasonName(last.finishReason),
          stopReason: last?.stopReason ?? null,
          ttftS: first ? (first - started) / 1000 : Number.NaN,
          e2eS: (end - started) / 1000,
        };
      }),
    );
    if (!json) {
      if (single) out.write("\n");
      for (const r of results) {
        const tpot = r.tokens > 1 ? `${ms((r.e2eS - r.ttftS) / (r.tokens - 1))} ms` : "-";
        const stop = r.stopReason === null ? "" : ` (stop reason ${r.stopReason})`;
        out.line(
          `request ${r.index} (${r.requestId}, engine ${r.engineIndex}): ${r.tokens} tokens, finish ${r.finishReason}${stop}, ` +
            `TTFT ${Number.isNaN(r.ttftS) ? "-" : `${ms(r.ttftS)} ms`}, TPOT ${tpot}, total ${ms(r.e2eS)} ms`,
        );
      }
    }
    const failed = results.filter((r) => r.finishReason === finishReasonName(FinishReason.ERROR));
    if (failed.length > 0) {
      throw new CliRuntimeError(
        `the engine ended ${failed.length} request(s) with finish reason "error" (${failed.map((r) => r.requestId).join(", ")}); ` +
          "check the engine's log for the cause",
      );
    }
    return EXIT_OK;
  },
};
