// Pure: runs → per-workload figures of each side, ratios ours / vLLM, what limited each run, the
// correctness line, and the markdown table. Nothing here measures.
import type { ClientResult } from "./bench-client.js";
import type { WindowCpu } from "./proc.js";
import type { Side } from "./stacks.js";
import type { Workload } from "./workloads.js";

/** One `vllm bench serve` run against one side. */
export interface SideRun {
  readonly side: Side;
  readonly round: number;
  readonly seed: number;
  readonly client: ClientResult;
  readonly cpu: WindowCpu;
}

/** The figures compared, per side (means over the rounds). */
export interface SideFigures {
  readonly outputTokS: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly itlP50Ms: number;
  readonly itlP99Ms: number;
  readonly e2elP50Ms: number;
  readonly e2elP99Ms: number;
  /** Server process CPU (all threads; vLLM: its API server process tree without the engine core) per output token. */
  readonly serverCpuUsPerToken: number;
  /**
   * Of it, the kernel's share (stime). Both servers write one chunk per token to a loopback TCP socket, and
   * the kernel runs the receiving side of that write in the writer's system call, so this part is common
   * ground: what one server can save lies mostly in the rest.
   */
  readonly serverKernelUsPerToken: number;
  /** Cores (1.0 = one core busy) over the measured window. */
  readonly serverCores: number;
  readonly engineCores: number;
  readonly clientCores: number;
  /** Every process of the machine, ours or not. */
  readonly machineCores: number;
  readonly chunksPerRequest: number;
}

export const METRICS = [
  "outputTokS",
  "ttftP50Ms",
  "ttftP99Ms",
  "itlP50Ms",
  "itlP99Ms",
  "e2elP50Ms",
  "e2elP99Ms",
  "serverCpuUsPerToken",
  "engineCores",
  "clientCores",
] as const satisfies readonly (keyof SideFigures)[];
export type Metric = (typeof METRICS)[number];

export const METRIC_LABELS: Record<Metric, string> = {
  outputTokS: "output tok/s",
  ttftP50Ms: "TTFT p50",
  ttftP99Ms: "TTFT p99",
  itlP50Ms: "ITL p50",
  itlP99Ms: "ITL p99",
  e2elP50Ms: "E2EL p50",
  e2elP99Ms: "E2EL p99",
  serverCpuUsPerToken: "server CPU / token",
  engineCores: "engine CPU",
  clientCores: "client CPU",
};

/** Higher is better only for throughput; for every other metric ours / vLLM < 1 is better. */
export const HIGHER_IS_BETTER: ReadonlySet<Metric> = new Set(["outputTokS"]);

export function runFigures(run: SideRun): SideFigures {
  const { client, cpu } = run;
  const wall = cpu.wallSeconds > 0 ? cpu.wallSeconds : Number.NaN;
  return {
    outputTokS: client.outputTokS,
    ttftP50Ms: client.ttftP50Ms,
    ttftP99Ms: client.ttftP99Ms,
    itlP50Ms: client.itlP50Ms,
    itlP99Ms: client.itlP99Ms,
    e2elP50Ms: client.e2elP50Ms,
    e2elP99Ms: client.e2elP99Ms,
    serverCpuUsPerToken:
      client.totalOutputTokens > 0 ? (cpu.serverSeconds / client.totalOutputTokens) * 1e6 : Number.NaN,
    serverKernelUsPerToken:
      client.totalOutputTokens > 0 ? (cpu.serverSystemSeconds / client.totalOutputTokens) * 1e6 : Number.NaN,
    serverCores: cpu.serverSeconds / wall,
    engineCores: cpu.engineSeconds / wall,
    clientCores: cpu.clientSeconds / wall,
    machineCores: cpu.machineBusySeconds / wall,
    chunksPerRequest: client.chunksPerRequest,
  };
}

/** Mean of each figure over runs (the rounds of one side). */
export function meanFigures(runs: readonly SideFigures[]): SideFigures {
  if (runs.length === 0) throw new Error("no runs to average");
  const keys = Object.keys(runs[0]!) as (keyof SideFigures)[];
  return Object.fromEntries(
    keys.map((k) => [k, runs.reduce((s, r) => s + r[k], 0) / runs.length]),
  ) as unknown as SideFigures;
}

/** ours / vLLM per metric. */
export function ratios(ours: SideFigures, vllm: SideFigures): Record<Metric, number> {
  return Object.fromEntries(METRICS.map((m) => [m, ours[m] / vllm[m]])) as Record<Metric, number>;
}

/** A process at or above this share of one core is "near a core" (a single-threaded loop is then the limit). */
export const NEAR_CORE = 0.85;

/**
 * What limited a run: a process near one core (the busiest first), else the machine's cores all busy (with
 * how much of it was other people's work), else nothing on CPU — the engine's step pacing.
 */
export function limitedBy(f: SideFigures, cores: number): string {
  const procs = [
    { name: "server", cores: f.serverCores },
    { name: "engine", cores: f.engineCores },
    { name: "client", cores: f.clientCores },
  ].sort((a, b) => b.cores - a.cores);
  const near = procs.filter((p) => p.cores >= NEAR_CORE);
  const ours = f.serverCores + f.engineCores + f.clientCores;
  const others = Math.max(0, f.machineCores - ours);
  const othersNote = others >= 0.1 ? `; other processes ${others.toFixed(2)} cores` : "";
  if (near.length > 0) {
    return `${near.map((p) => `${p.name} ${p.cores.toFixed(2)}`).join(", ")} (near 1 core)${othersNote}`;
  }
  if (f.machineCores >= 0.9 * cores) {
    return `all ${cores} cores busy (${f.machineCores.toFixed(2)}: server ${f.serverCores.toFixed(2)}, engine ${f.engineCores.toFixed(2)}, client ${f.clientCores.toFixed(2)})${othersNote}`;
  }
  return `no process near a core (busiest: ${procs[0]!.name} ${procs[0]!.cores.toFixed(2)}): the engine's step pace${othersNote}`;
}

/** Same requests, same token counts, same texts? One round's two runs (same seed: same prompts, same order). */
export interface Correctness {
  readonly requests: number;
  readonly completed: { readonly vllm: number; readonly ours: number };
  readonly failed: { readonly vllm: number; readonly ours: number };
  readonly outputTokens: { readonly vllm: number; readonly ours: number };
  /** Requests whose output token counts differ. */
  readonly tokenCountMismatches: number;
  readonly textsEqual: number;
  /** Texts that differ at both ends: the engine generated other ids (the prompt was tokenized differently). */
  readonly textsDifferentIds: number;
  /**
   * The same ids detokenized differently where the text package departs from vLLM on purpose (its README,
   * "UTF-8 edges"): `promptEcho`, vLLM's text is ours behind the prompt's text (a prompt that ends inside a
   * character: vLLM's DecodeStream repeats the prompt); `heldCharacters`, ours is vLLM's and up to
   * HELD_CHARACTERS_MAX more characters, none U+FFFD (whole characters held back with an unfinished one when
   * the request finished: vLLM drops them, ours emits them).
   */
  readonly textsAtUtf8Edge: { readonly promptEcho: number; readonly heldCharacters: number };
  /** Other texts with an equal start or an equal end: the same ids detokenized differently, unexplained. */
  readonly textsDetokenizedDifferently: number;
  /** The first text that diverges mid-text: request index, character offset, and ±20 characters of each side. */
  readonly firstDivergence?: {
    readonly request: number;
    readonly at: number;
    readonly vllm: string;
    readonly ours: string;
  };
  readonly ok: boolean;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function commonSuffix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[a.length - 1 - i] === b[b.length - 1 - i]) i++;
  return i;
}

/** Held tokens span at most one unfinished character (≤ 4 byte-level tokens), so a few characters at most. */
const HELD_CHARACTERS_MAX = 8;

/** Which documented UTF-8 edge explains vLLM's text `a` against ours `b`, if one does. */
function utf8Edge(a: string, b: string): "promptEcho" | "heldCharacters" | undefined {
  if (b.length > 0 && a.length > b.length && a.endsWith(b)) return "promptEcho";
  const extra = b.slice(a.length);
  if (
    b.length > a.length &&
    b.startsWith(a) &&
    extra.length <= HELD_CHARACTERS_MAX &&
    !extra.includes("\uFFFD")
  )
    return "heldCharacters";
  return undefined;
}

export function compareRuns(vllm: ClientResult, ours: ClientResult): Correctness {
  const n = Math.max(vllm.outputLens.length, ours.outputLens.length);
  let tokenCountMismatches = 0;
  let textsEqual = 0;
  let textsDifferentIds = 0;
  let textsDetokenizedDifferently = 0;
  const textsAtUtf8Edge = { promptEcho: 0, heldCharacters: 0 };
  let firstDivergence: Correctness["firstDivergence"];
  for (let i = 0; i < n; i++) {
    if (vllm.outputLens[i] !== ours.outputLens[i]) tokenCountMismatches++;
    const a = vllm.texts[i] ?? "";
    const b = ours.texts[i] ?? "";
    const at = commonPrefix(a, b);
    if (a === b) {
      textsEqual++;
      continue;
    }
    // Other ids share nothing at either end; the same ids detokenized differently share a start or an end.
    if (at === 0 && commonSuffix(a, b) === 0) {
      textsDifferentIds++;
      continue;
    }
    const edge = utf8Edge(a, b);
    if (edge !== undefined) textsAtUtf8Edge[edge]++;
    else {
      textsDetokenizedDifferently++;
      const around = (t: string) => t.slice(Math.max(0, at - 20), at + 20);
      firstDivergence ??= { request: i, at, vllm: around(a), ours: around(b) };
    }
  }
  return {
    requests: n,
    completed: { vllm: vllm.completed, ours: ours.completed },
    failed: { vllm: vllm.failed, ours: ours.failed },
    outputTokens: { vllm: vllm.totalOutputTokens, ours: ours.totalOutputTokens },
    tokenCountMismatches,
    textsEqual,
    textsDifferentIds,
    textsAtUtf8Edge,
    textsDetokenizedDifferently,
    ...(firstDivergence ? { firstDivergence } : {}),
    ok:
      vllm.completed === ours.completed &&
      vllm.failed === 0 &&
      ours.failed === 0 &&
      vllm.totalOutputTokens === ours.totalOutputTokens &&
      tokenCountMismatches === 0 &&
      textsDetokenizedDifferently === 0,
  };
}

export function correctnessLine(c: Correctness): string {
  const same = (x: { vllm: number; ours: number }) =>
    x.vllm === x.ours ? `${x.ours} both` : `vLLM ${x.vllm}, ours ${x.ours}`;
  const parts = [
    `completed ${same(c.completed)}`,
    `failed ${same(c.failed)}`,
    `output tokens ${same(c.outputTokens)}${c.tokenCountMismatches > 0 ? ` (${c.tokenCountMismatches} requests differ)` : ""}`,
    `texts equal ${c.textsEqual}/${c.requests}`,
  ];
  if (c.textsDifferentIds > 0)
    parts.push(`${c.textsDifferentIds} differ at both ends (other ids: the prompt tokenized differently)`);
  const { promptEcho, heldCharacters } = c.textsAtUtf8Edge;
  if (promptEcho + heldCharacters > 0) {
    const edges = [
      ...(promptEcho > 0
        ? [`${promptEcho} where vLLM repeats the prompt's text (the prompt ends inside a character)`]
        : []),
      ...(heldCharacters > 0
        ? [`${heldCharacters} where ours keeps whole characters vLLM drops at the end`]
        : []),
    ];
    parts.push(`${promptEcho + heldCharacters} differ at a documented UTF-8 edge (${edges.join("; ")})`);
  }
  if (c.textsDetokenizedDifferently > 0)
    parts.push(`${c.textsDetokenizedDifferently} share a start or an end (same ids detokenized differently)`);
  if (c.firstDivergence) {
    const d = c.firstDivergence;
    parts.push(
      `first: request ${d.request} at character ${d.at}, vLLM ${JSON.stringify(d.vllm)} vs ours ${JSON.stringify(d.ours)}`,
    );
  }
  return `${c.ok ? "ok" : "MISMATCH"}: ${parts.join(", ")}`;
}

export interface WorkloadResult {
  readonly workload: Workload;
  readonly runs: readonly (SideRun & { readonly figures: SideFigures })[];
  readonly vllm: SideFigures;
  readonly ours: SideFigures;
  readonly ratios: Record<Metric, number>;
  readonly limitedBy: { readonly vllm: string; readonly ours: string };
  /** The server's CPU per output token by thread group (µs, mean over the rounds), largest first. */
  readonly threads: { readonly vllm: ThreadShare[]; readonly ours: ThreadShare[] };
  /** One per round. */
  readonly correctness: readonly Correctness[];
  readonly skipped?: undefined;
}

export interface ThreadShare {
  readonly group: string;
  readonly usPerToken: number;
}

/** Mean over `runs` of each thread group's CPU per output token, largest first. */
export function threadShares(runs: readonly SideRun[]): ThreadShare[] {
  const sums = new Map<string, number>();
  for (const run of runs) {
    const tokens = run.client.totalOutputTokens;
    if (tokens <= 0) continue;
    for (const [group, seconds] of Object.entries(run.cpu.serverThreadSeconds)) {
      sums.set(group, (sums.get(group) ?? 0) + (seconds / tokens) * 1e6);
    }
  }
  return [...sums]
    .map(([group, sum]) => ({ group, usPerToken: sum / runs.length }))
    .sort((a, b) => b.usPerToken - a.usPerToken);
}

export function summarizeWorkload(
  workload: Workload,
  runs: readonly SideRun[],
  cores: number,
): WorkloadResult {
  const withFigures = runs.map((r) => ({ ...r, figures: runFigures(r) }));
  const side = (s: Side) => meanFigures(withFigures.filter((r) => r.side === s).map((r) => r.figures));
  const vllm = side("vllm");
  const ours = side("ours");
  const rounds = [...new Set(runs.map((r) => r.round))].sort((a, b) => a - b);
  const correctness = rounds.flatMap((round) => {
    const a = runs.find((r) => r.round === round && r.side === "vllm");
    const b = runs.find((r) => r.round === round && r.side === "ours");
    return a && b ? [compareRuns(a.client, b.client)] : [];
  });
  return {
    workload,
    runs: withFigures,
    vllm,
    ours,
    ratios: ratios(ours, vllm),
    limitedBy: { vllm: limitedBy(vllm, cores), ours: limitedBy(ours, cores) },
    threads: {
      vllm: threadShares(runs.filter((r) => r.side === "vllm")),
      ours: threadShares(runs.filter((r) => r.side === "ours")),
    },
    correctness,
  };
}

export interface VsVllmDocument {
  readonly tool: "@vllm-engine-core/bench vs-vllm";
  readonly command: string;
  readonly generatedAt: string;
  readonly quick: boolean;
  readonly rounds: number;
  readonly cores: number;
  readonly loadAvg: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly durationS: number;
  readonly kit?: string;
  readonly engine: Readonly<Record<string, unknown>>;
  /** Our server's `--api-server-count` and Node.js (VS_VLLM_API_SERVERS, VS_VLLM_OURS_NODE). */
  readonly ours?: { readonly apiServers: number; readonly node: string; readonly streamInterval?: number };
  readonly skipped?: string;
  readonly workloads: readonly WorkloadResult[];
  readonly errors: readonly string[];
}

const fmtRatio = (m: Metric, r: number): string => {
  if (!Number.isFinite(r)) return "–";
  const better = HIGHER_IS_BETTER.has(m) ? r > 1.05 : r < 0.95;
  const worse = HIGHER_IS_BETTER.has(m) ? r < 0.95 : r > 1.05;
  const mark = m === "engineCores" || m === "clientCores" ? "" : better ? "" : worse ? " (worse)" : "";
  return `${r.toFixed(2)}×${mark}`;
};

function fmt(m: keyof SideFigures, v: number): string {
  if (!Number.isFinite(v)) return "–";
  if (m === "outputTokS") return v.toFixed(0);
  if (m === "serverCpuUsPerToken") return `${v.toFixed(1)} µs`;
  if (m.endsWith("Cores")) return v.toFixed(2);
  if (m === "chunksPerRequest") return v.toFixed(1);
  return `${v.toFixed(1)} ms`;
}

/** A table row per workload and side (vLLM's first): `| workload | side | <cells> |`. */
function sideRows(doc: VsVllmDocument, cells: (w: WorkloadResult, side: Side) => string): string[] {
  return doc.workloads.flatMap((w) =>
    (["vllm", "ours"] as const).map(
      (side) => `| ${w.workload.title} | ${side === "vllm" ? "vLLM" : "ours"} | ${cells(w, side)} |`,
    ),
  );
}

export function renderMarkdown(doc: VsVllmDocument): string {
  const lines: string[] = [
    "# vs-vllm: vLLM's Python OpenAI server and ours, same real engine core, `vllm bench serve`",
    "",
    `Generated ${doc.generatedAt} by \`${doc.command}\`${doc.quick ? " (**quick**: one wave per run, ¼ of the output tokens)" : ""}; ` +
      `${doc.rounds} round(s) A/B, ${doc.cores} cores, load average ${doc.loadAvg.start.map((l) => l.toFixed(2)).join(" ")} → ${doc.loadAvg.end.map((l) => l.toFixed(2)).join(" ")}; took ${doc.durationS.toFixed(0)} s.`,
  ];
  if (doc.skipped) {
    lines.push("", `**Skipped**: ${doc.skipped}`, "");
    return `${lines.join("\n")}\n`;
  }
  lines.push(
    `Engine (both sides): ${Object.entries(doc.engine)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}. Kit: ${doc.kit ?? "?"}.`,
    ...(doc.ours
      ? [
          `Our server: --api-server-count ${doc.ours.apiServers}, Node.js ${doc.ours.node}. Both servers: ` +
            `--stream-interval ${doc.ours.streamInterval ?? 1}.`,
        ]
      : []),
    "",
  );
  if (doc.errors.length > 0)
    lines.push("**Failures:**", "", ...doc.errors.map((e) => `- ${e.split("\n")[0]}`), "");
  lines.push(
    "## Ours / vLLM's (same run; < 1 is better except output tok/s)",
    "",
    `| workload | ${METRICS.map((m) => METRIC_LABELS[m]).join(" | ")} |`,
    `| --- | ${METRICS.map(() => "---").join(" | ")} |`,
    ...doc.workloads.map(
      (w) => `| ${w.workload.title} | ${METRICS.map((m) => fmtRatio(m, w.ratios[m])).join(" | ")} |`,
    ),
    "",
    "## Figures (mean over the rounds)",
    "",
    "| workload | side | output tok/s | TTFT p50 / p99 | ITL p50 / p99 | E2EL p50 / p99 | server CPU / token (of it kernel) | server / engine / client / machine cores | chunks / request | limited by |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  lines.push(
    ...sideRows(doc, (w, side) => {
      const f = w[side];
      return (
        `${fmt("outputTokS", f.outputTokS)} | ` +
        `${fmt("ttftP50Ms", f.ttftP50Ms)} / ${fmt("ttftP99Ms", f.ttftP99Ms)} | ${fmt("itlP50Ms", f.itlP50Ms)} / ${fmt("itlP99Ms", f.itlP99Ms)} | ` +
        `${fmt("e2elP50Ms", f.e2elP50Ms)} / ${fmt("e2elP99Ms", f.e2elP99Ms)} | ${fmt("serverCpuUsPerToken", f.serverCpuUsPerToken)} (${fmt("serverCpuUsPerToken", f.serverKernelUsPerToken)}) | ` +
        `${fmt("serverCores", f.serverCores)} / ${fmt("engineCores", f.engineCores)} / ${fmt("clientCores", f.clientCores)} / ${fmt("machineCores", f.machineCores)} | ` +
        `${fmt("chunksPerRequest", f.chunksPerRequest)} | ${w.limitedBy[side]}`
      );
    }),
  );
  lines.push(
    "",
    "## Server CPU per output token, by thread (µs, mean over the rounds)",
    "",
    "Node.js ≥ 22 names its threads: main = the event loop (HTTP, text, SSE writes), worker threads = the " +
      "runtime (and API servers 2..N), V8 workers = GC and concurrent compilation, libuv pool = the tokenizer's " +
      "encodes; other names are the threads' own (Node.js 20 names none: `node`).",
    "",
    "| workload | side | threads |",
    "| --- | --- | --- |",
  );
  lines.push(
    ...sideRows(doc, (w, side) => {
      const shares = w.threads[side].filter((t) => t.usPerToken >= 0.05);
      return shares.map((t) => `${t.group} ${t.usPerToken.toFixed(1)}`).join(" · ") || "–";
    }),
  );
  lines.push("", "## Correctness (per round: same prompts on both sides)", "");
  for (const w of doc.workloads) {
    for (const [i, c] of w.correctness.entries()) {
      lines.push(`- ${w.workload.title}, round ${i + 1}: ${correctnessLine(c)}`);
    }
  }
  lines.push(
    "",
    "## Rounds",
    "",
    "| workload | round | side | output tok/s | TTFT p50 | ITL p99 | server CPU / token | window |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const w of doc.workloads) {
    for (const r of w.runs) {
      lines.push(
        `| ${w.workload.name} | ${r.round} | ${r.side} | ${fmt("outputTokS", r.figures.outputTokS)} | ${fmt("ttftP50Ms", r.figures.ttftP50Ms)} | ` +
          `${fmt("itlP99Ms", r.figures.itlP99Ms)} | ${fmt("serverCpuUsPerToken", r.figures.serverCpuUsPerToken)} | ${r.cpu.wallSeconds.toFixed(1)} s |`,
      );
    }
  }
  lines.push(
    "",
    "How: for each workload both stacks start (each its own engine, same flags); then per round vLLM's side and " +
      "ours are benchmarked one after the other (the order alternates between rounds), with the round's seed on both. " +
      'CPU is utime + stime from /proc over the measured part of each run (from the client\'s "Starting main benchmark run" ' +
      "to its result), for the server (vLLM: its API server process and its children except the engine core), the engine " +
      "core process and the client; machine = every process (others' work included). The server's stime is shown in " +
      "brackets: both servers write each chunk to a loopback socket, and the kernel delivers it to the client inside " +
      "that write, so most of it is common to both.",
    "",
  );
  return `${lines.join("\n")}\n`;
}
