// `info`: connect, print one row per engine from its registration (EngineCoreReadyResponse), exit.
import type { EngineCoreReadyResponse } from "@vllm-engine-core/client";
import { bool } from "../args.js";
import type { Command } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { EXIT_OK } from "../errors.js";
import { table, toJson } from "../format.js";

/** A field the engine's vLLM version does not send (or sends as null) is shown as "-", never invented. */
const NOT_REPORTED = "-";
const cell = (v: string | number | null | undefined): string => (v == null ? NOT_REPORTED : String(v));

function maxConcurrency(r: EngineCoreReadyResponse): string {
  return r.kvCacheMaxConcurrency == null ? NOT_REPORTED : r.kvCacheMaxConcurrency.toFixed(2);
}

export const infoCommand: Command = {
  spec: {
    name: "info",
    summary: "connect and print a table of the engines (version, dtype, lengths, KV cache, parallelism)",
    connects: true,
    flags: [{ name: "json", type: "boolean", help: "print one JSON object instead of the table" }],
    notes: [
      "Columns: engine index, vLLM version, dtype, max_model_len, GPU blocks, block size, DP rank / DP size,",
      "TP / PP size, KV-cache size in tokens and max concurrency at max_model_len (as the engines report them).",
    ],
  },
  async run({ args, lifecycle, out }) {
    const { client } = await openSession(planConnection(args, "info"), lifecycle, out.notice);
    const engines = client.engineIndices.map((index, i) => ({
      index,
      outputAddress: client.outputAddresses[i],
      ...client.readyResponses[i]!,
    }));
    if (bool(args, "json")) {
      out.line(toJson({ inputAddress: client.inputAddress, engineCount: client.engineCount, engines }));
      return EXIT_OK;
    }
    const rows = [
      [
        "engine",
        "vllm",
        "dtype",
        "max_model_len",
        "gpu_blocks",
        "block_size",
        "dp_rank/size",
        "tp",
        "pp",
        "kv_tokens",
        "max_concurrency",
      ],
      ...engines.map((e) => [
        String(e.index),
        cell(e.vllmVersion),
        cell(e.dtype),
        cell(e.maxModelLen),
        cell(e.numGpuBlocks),
        cell(e.blockSize),
        `${cell(e.dataParallelRank)}/${cell(e.dataParallelSize)}`,
        cell(e.tensorParallelSize),
        cell(e.pipelineParallelSize),
        cell(e.kvCacheSizeTokens),
        maxConcurrency(e),
      ]),
    ];
    out.line(table(rows));
    return EXIT_OK;
  },
};
