// The client README's table of what each vLLM version reports at connect: every info getter and every
// `readyResponses[i]` field, per version, generated from the protocol's compatibility table (the codec's
// field tables), so it cannot drift from what the decoder does.
// scripts/write-info-table.ts writes it into README.md; test/readme-info-table.test.ts keeps it current.
import { compatibilityTable } from "@vllm-engine-core/protocol";

/**
 * The registration's fields (EngineCoreReadyResponse at the pin, in declaration order) and the getter that
 * reports each, if any. Fields the compatibility table has no row for are in every version.
 */
export const REGISTRATION_FIELDS: readonly { wire: string; key: string; getter?: string }[] = [
  { wire: "max_model_len", key: "maxModelLen", getter: "`maxModelLen` (minimum)" },
  { wire: "num_gpu_blocks", key: "numGpuBlocks", getter: "`totalNumGpuBlocks` (sum)" },
  { wire: "block_size", key: "blockSize", getter: "`blockSize`" },
  { wire: "dp_stats_address", key: "dpStatsAddress" },
  { wire: "dtype", key: "dtype", getter: "`modelDtype`" },
  { wire: "vllm_version", key: "vllmVersion", getter: "`vllmVersion`" },
  { wire: "world_size", key: "worldSize", getter: "`worldSize`" },
  { wire: "data_parallel_size", key: "dataParallelSize", getter: "`dataParallelSize`" },
  { wire: "tensor_parallel_size", key: "tensorParallelSize" },
  { wire: "pipeline_parallel_size", key: "pipelineParallelSize" },
  { wire: "decode_context_parallel_size", key: "decodeContextParallelSize" },
  { wire: "data_parallel_rank", key: "dataParallelRank" },
  { wire: "max_num_seqs", key: "maxNumSeqs" },
  { wire: "max_num_batched_tokens", key: "maxNumBatchedTokens" },
  { wire: "instance_id", key: "instanceId" },
  { wire: "kv_cache_size_tokens", key: "kvCacheSizeTokens" },
  { wire: "kv_cache_max_concurrency", key: "kvCacheMaxConcurrency" },
  { wire: "kv_events_config", key: "kvEventsConfig" },
];

const YES = "✔";
const NO = "—";

/** Per field, the versions whose registration carries it (true) or not (false), in table column order. */
export function registrationPresence(): { columns: string[]; rows: { wire: string; cells: boolean[] }[] } {
  const table = compatibilityTable();
  const prefix = "EngineCoreReadyResponse.";
  const versioned = new Map(
    table.rows
      .filter((r) => r.section === "field" && r.feature.startsWith(prefix))
      .map((r) => [r.feature.slice(prefix.length), r.cells.map((c) => c === YES)]),
  );
  for (const wire of versioned.keys()) {
    if (!REGISTRATION_FIELDS.some((f) => f.wire === wire))
      throw new Error(`the codec has registration field ${wire}: add it to REGISTRATION_FIELDS`);
  }
  return {
    columns: table.columns.map((c) => c.label),
    rows: REGISTRATION_FIELDS.map((f) => ({
      wire: f.wire,
      cells: versioned.get(f.wire) ?? table.columns.map(() => true),
    })),
  };
}

export function infoTableMarkdown(): string {
  const { columns, rows } = registrationPresence();
  const header = ["`readyResponses[i]` field", "getter", ...columns];
  const body = rows.map((row) => {
    const f = REGISTRATION_FIELDS.find((x) => x.wire === row.wire)!;
    return [
      `\`${f.key}\` (\`${f.wire}\`)`,
      f.getter ?? "",
      ...row.cells.map((present) => (present ? YES : NO)),
    ];
  });
  const widths = header.map((h, i) => Math.max(3, h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const rule = `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`;
  return `${[line(header), rule, ...body.map(line)].join("\n")}\n`;
}

const START = "<!-- info-table:start -->";
const END = "<!-- info-table:end -->";

/** `doc` with the text between the info-table markers replaced by the generated table. */
export function withInfoTable(doc: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`no ${START} … ${END} block in the document`);
  return `${doc.slice(0, start + START.length)}\n${infoTableMarkdown()}${doc.slice(end)}`;
}
