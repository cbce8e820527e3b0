// The compatibility table (features × vLLM versions), generated from the same field tables the codec
// decodes and encodes with, plus the utility and behaviour registries, so it cannot drift from the code.
// scripts/compat-table.ts writes it as Markdown.
import type { StructCodec } from "../schema/struct.js";
import { EngineCoreReadyResponseCodec } from "../structs/handshake.js";
import {
  EngineCoreOutputCodec,
  EngineCoreOutputsCodec,
  PrefillStatsCodec,
  SchedulerStatsCodec,
  SpecDecodingStatsCodec,
  UtilityOutputCodec,
} from "../structs/output.js";
import { EngineCoreRequestCodec } from "../structs/request.js";
import { SamplingParamsCodec } from "../structs/sampling.js";
import { WIRE_CHANGES, type WireChange } from "./changes.js";
import { UTILITY_METHODS, utilityAvailable } from "./utilities.js";
import { VLLM_VERSION_INFO, VLLM_VERSIONS, type VllmVersionInfo, versionHas } from "./versions.js";

export type CompatibilitySection = "layout" | "field" | "validation" | "utility" | "behaviour";

export interface CompatibilityRow {
  readonly section: CompatibilitySection;
  readonly feature: string;
  /** One cell per column: "✔" / "—", or a field count for layout rows. */
  readonly cells: readonly string[];
  /** Upstream PR and commit, where one change introduced the row's difference. */
  readonly ref: string;
}

export interface CompatibilityTable {
  readonly columns: readonly VllmVersionInfo[];
  readonly rows: readonly CompatibilityRow[];
}

const YES = "✔";
const NO = "—";

// biome-ignore lint/suspicious/noExplicitAny: the table reads any struct codec's field table
type AnyStruct = StructCodec<any, any>;

/** The wire structs whose layouts differ between versions (or that carry a changed struct). */
const STRUCTS: readonly { codec: AnyStruct; what: string }[] = [
  { codec: EngineCoreRequestCodec, what: "array elements" },
  { codec: SamplingParamsCodec, what: "declared fields (omit_defaults map)" },
  { codec: EngineCoreOutputsCodec, what: "array elements" },
  { codec: EngineCoreOutputCodec, what: "array elements" },
  { codec: UtilityOutputCodec, what: "array elements" },
  { codec: SchedulerStatsCodec, what: "map keys" },
  { codec: PrefillStatsCodec, what: "map keys" },
  { codec: SpecDecodingStatsCodec, what: "map keys" },
  { codec: EngineCoreReadyResponseCodec, what: "map keys" },
];

function ref(c: WireChange | undefined): string {
  return c === undefined ? "" : `#${c.pr} (${c.commit.slice(0, 9)})`;
}

function fieldChange(struct: string, wire: string): WireChange | undefined {
  return WIRE_CHANGES.find((c) => c.kind === "field" && c.subject === struct && c.fields?.includes(wire));
}

export function compatibilityTable(): CompatibilityTable {
  const rows: CompatibilityRow[] = [];
  for (const { codec, what } of STRUCTS) {
    rows.push({
      section: "layout",
      feature: `${codec.name}: ${what}`,
      cells: VLLM_VERSIONS.map((v) => String(codec.fieldsAt(v).length)),
      ref: "",
    });
  }
  for (const { codec } of STRUCTS) {
    codec.allFields.forEach((f, index) => {
      if (f.since === undefined) return;
      const where = codec.kind === "array" ? ` [index ${index}]` : "";
      rows.push({
        section: "field",
        feature: `${codec.name}.${f.wire}${where}`,
        cells: VLLM_VERSIONS.map((v) => (versionHas(v, f.since) ? YES : NO)),
        ref: ref(fieldChange(codec.name, f.wire)),
      });
    });
  }
  for (const c of WIRE_CHANGES) {
    if (c.kind !== "validation") continue;
    rows.push({ section: "validation", feature: c.label ?? c.subject, cells: presence(c), ref: ref(c) });
  }
  for (const m of UTILITY_METHODS) {
    if (m.since === undefined && m.until === undefined) continue;
    const change = WIRE_CHANGES.find((c) => c.kind === "utility" && c.subject.split(" / ").includes(m.name));
    rows.push({
      section: "utility",
      feature: `utility ${m.name}${m.owner === "DPEngineCoreProc" ? " (DP engines)" : ""}`,
      cells: VLLM_VERSIONS.map((v) => (utilityAvailable(m.name, v) ? YES : NO)),
      ref: ref(change),
    });
  }
  for (const c of WIRE_CHANGES) {
    if (c.kind !== "behaviour") continue;
    rows.push({ section: "behaviour", feature: c.label ?? c.subject, cells: presence(c), ref: ref(c) });
  }
  return { columns: VLLM_VERSIONS.map((v) => VLLM_VERSION_INFO[v]), rows };
}

function presence(c: WireChange): string[] {
  return VLLM_VERSIONS.map((v) => (versionHas(v, c.since) ? YES : NO));
}

const SECTION_TITLES: Readonly<Record<CompatibilitySection, string>> = {
  layout: "**Layouts** (count per version)",
  field: "**Fields** (✔ = the version sends/reads it; — = absent from its messages)",
  validation: "**Decode-time validation** (SamplingParams `__post_init__`)",
  utility: "**Utilities**",
  behaviour: "**Behaviour**",
};

/** The table as Markdown (one table, a heading row per section), columns padded as biome formats them. */
export function compatibilityMarkdown(table: CompatibilityTable = compatibilityTable()): string {
  const header = ["feature", ...table.columns.map((c) => c.label), "upstream change"];
  const body: string[][] = [];
  let section: CompatibilitySection | undefined;
  for (const row of table.rows) {
    if (row.section !== section) {
      section = row.section;
      body.push([SECTION_TITLES[section], ...table.columns.map(() => ""), ""]);
    }
    body.push([escapeCell(row.feature), ...row.cells, row.ref]);
  }
  const widths = header.map((h, i) => Math.max(3, h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const rule = `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`;
  return `${[line(header), rule, ...body.map(line)].join("\n")}\n`;
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, "\\|");
}

const START = "<!-- compat-table:start -->";
const END = "<!-- compat-table:end -->";

/** `doc` with the text between the compat-table markers replaced by the generated table. */
export function withCompatibilityTable(
  doc: string,
  table: CompatibilityTable = compatibilityTable(),
): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`no ${START} … ${END} block in the document`);
  return `${doc.slice(0, start + START.length)}\n${compatibilityMarkdown(table)}${doc.slice(end)}`;
}
