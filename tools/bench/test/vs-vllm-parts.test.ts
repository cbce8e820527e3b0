// The pure parts of the vs-vllm scenario: reading `vllm bench serve` results, /proc CPU, the ratio table,
// what limited a run and the correctness line. (The scenario itself needs ../shared/vllm-cpu: `npm run bench
// -- --only vs-vllm`.)
import { describe, expect, it } from "vitest";
import { BenchResultError, benchArgv, parseBenchResult } from "../src/scenarios/vs-vllm/bench-client.js";
import {
  cpuOf,
  descendants,
  parseMachineStat,
  parseStat,
  readThreads,
  threadGroup,
  windowCpu,
} from "../src/scenarios/vs-vllm/proc.js";
import {
  compareRuns,
  correctnessLine,
  limitedBy,
  renderMarkdown,
  type SideFigures,
  type SideRun,
  summarizeWorkload,
  type VsVllmDocument,
} from "../src/scenarios/vs-vllm/report.js";
import { engineCorePid, oursServerSetup, splitRoles } from "../src/scenarios/vs-vllm/stacks.js";
import { selectWorkloads } from "../src/scenarios/vs-vllm/workloads.js";

/** The shape vllm/benchmarks/serve.py saves with --save-result --save-detailed (fields this scenario reads). */
function benchJson(over: Record<string, unknown> = {}) {
  return {
    duration: 2,
    completed: 2,
    failed: 0,
    total_output_tokens: 6,
    output_throughput: 3,
    p50_ttft_ms: 10,
    p99_ttft_ms: 20,
    p50_itl_ms: 1,
    p99_itl_ms: 2,
    p50_e2el_ms: 30,
    p99_e2el_ms: 40,
    output_lens: [3, 3],
    generated_texts: [" a b c", " d e f"],
    itls: [[0.01, 0.01], [0.02]],
    errors: ["", ""],
    ...over,
  };
}

describe("parseBenchResult", () => {
  it("reads the figures, the per-request lengths and texts, and chunks per request from the ITL gaps", () => {
    const r = parseBenchResult(benchJson());
    expect(r).toMatchObject({ completed: 2, failed: 0, totalOutputTokens: 6, outputTokS: 3, ttftP99Ms: 20 });
    expect(r.itlP99Ms).toBe(2);
    expect(r.e2elP50Ms).toBe(30);
    expect(r.outputLens).toEqual([3, 3]);
    expect(r.texts).toEqual([" a b c", " d e f"]);
    expect(r.chunksPerRequest).toBe(2.5); // (2 + 1 + 1 + 1) / 2
    expect(r.errors).toEqual([]);
  });

  it("leaves failed requests out of chunks per request and keeps their distinct errors", () => {
    const r = parseBenchResult(
      benchJson({
        failed: 1,
        completed: 1,
        output_lens: [3, 0],
        errors: ["", "boom"],
        itls: [[0.01, 0.01], []],
      }),
    );
    expect(r.chunksPerRequest).toBe(3);
    expect(r.errors).toEqual(["boom"]);
  });

  it("refuses a result saved without --save-detailed, or with a missing figure", () => {
    const { generated_texts: _, ...noTexts } = benchJson();
    expect(() => parseBenchResult(noTexts)).toThrow(BenchResultError);
    expect(() => parseBenchResult(benchJson({ p99_itl_ms: null }))).toThrow(/p99_itl_ms/);
    expect(() => parseBenchResult(benchJson({ itls: [[0.01]] }))).toThrow(
      /2 output_lens, 2 generated_texts, 1 itls/,
    );
    expect(() => parseBenchResult([])).toThrow(BenchResultError);
  });
});

describe("benchArgv", () => {
  it("drives the chat endpoint with the openai-chat backend, random data, --ignore-eos and the round's seed", () => {
    const [chat] = selectWorkloads({ quick: false, only: ["chat-256"] });
    const argv = benchArgv({
      workload: chat!,
      baseUrl: "http://127.0.0.1:1",
      tokenizerDir: "/t",
      seed: 2,
      resultDir: "/r",
      resultFile: "f.json",
    });
    const flag = (name: string) => argv[argv.indexOf(name) + 1];
    expect(argv.slice(0, 2)).toEqual(["bench", "serve"]);
    expect(flag("--backend")).toBe("openai-chat");
    expect(flag("--endpoint")).toBe("/v1/chat/completions");
    expect(flag("--dataset-name")).toBe("random");
    expect(flag("--max-concurrency")).toBe("256");
    expect(flag("--seed")).toBe("2");
    expect(argv).toContain("--ignore-eos");
    expect(argv).toContain("--save-detailed");
  });
});

describe("workloads", () => {
  it("has the six workloads; quick keeps the concurrency and shortens the run; unknown names throw", () => {
    const full = selectWorkloads({ quick: false });
    expect(full.map((w) => [w.name, w.streams, w.inputLen, w.outputLen, w.stepMs])).toEqual([
      ["completions-8", 8, 128, 128, 10],
      ["completions-64", 64, 128, 128, 10],
      ["completions-256", 256, 128, 128, 10],
      ["chat-256", 256, 128, 128, 10],
      ["long-32", 32, 2048, 64, 10],
      ["saturation-512", 512, 128, 128, 0],
    ]);
    const quick = selectWorkloads({ quick: true });
    expect(quick.map((w) => w.streams)).toEqual(full.map((w) => w.streams));
    expect(quick.every((w, i) => w.prompts < full[i]!.prompts && w.outputLen < full[i]!.outputLen)).toBe(
      true,
    );
    expect(() => selectWorkloads({ quick: false, only: ["nope"] })).toThrow(
      /known: completions-8, completions-64/,
    );
  });
});

describe("/proc", () => {
  it("parseStat reads the parent pid, utime + stime and stime when the command name holds spaces and ')'", () => {
    const stat = "4242 (python (x) y) S 17 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0";
    expect(parseStat(stat)).toEqual({ ppid: 17, cpuSeconds: 3, systemSeconds: 0.5 });
  });

  it("descendants walks the whole tree; splitRoles keeps vLLM's engine core out of its server", () => {
    const table = new Map([
      [10, { ppid: 1, cpuSeconds: 5, systemSeconds: 1 }], // vllm serve (API server)
      [11, { ppid: 10, cpuSeconds: 0.1, systemSeconds: 0.05 }], // resource tracker
      [12, { ppid: 10, cpuSeconds: 7, systemSeconds: 2 }], // EngineCore
      [13, { ppid: 12, cpuSeconds: 1, systemSeconds: 0 }], // a child of the engine core
      [20, { ppid: 1, cpuSeconds: 2, systemSeconds: 0.5 }], // the benchmark client
    ]);
    expect(descendants(table, 10).sort()).toEqual([10, 11, 12, 13]);
    const roles = splitRoles(table, 10, 12, 20);
    expect([...roles.server].sort()).toEqual([10, 11]);
    expect([...roles.engine].sort()).toEqual([12, 13]);
    expect(cpuOf(table, roles.server)).toBeCloseTo(5.1);
    expect(cpuOf(table, roles.server, "system")).toBeCloseTo(1.05);
    expect(cpuOf(table, roles.engine)).toBe(8);
    expect(cpuOf(table, [99])).toBe(0);
  });

  it("threadGroup names Node.js's and ZeroMQ's threads and keeps other names", () => {
    expect(
      ["MainThread", "WorkerThread", "V8Worker", "libuv-worker", "ZMQbg/IO/0", "node", "python3"].map(
        threadGroup,
      ),
    ).toEqual(["main", "worker threads", "V8 workers", "libuv pool", "ZeroMQ I/O", "node", "python3"]);
  });

  it("readThreads sees this process's own threads, the event loop among them", () => {
    const threads = readThreads([process.pid]);
    const own = threads.get(`${process.pid}/${process.pid}`);
    expect(own).toBeDefined();
    expect(own!.seconds).toBeGreaterThan(0);
    expect(readThreads([2 ** 22 + 1]).size).toBe(0); // no such process
  });

  it("engineCorePid reads vLLM's log prefix, DP ranks included", () => {
    expect(engineCorePid("(EngineCore pid=13689) INFO 12-05 [core.py:121] Initializing")).toBe(13689);
    expect(engineCorePid("(EngineCore_DP0 pid=7) INFO x")).toBe(7);
    expect(() => engineCorePid("(APIServer pid=9) INFO")).toThrow(/no engine-core pid/);
  });

  it("parseMachineStat sums busy ticks of the aggregate line (idle and iowait are not busy)", () => {
    const text = "cpu  100 20 30 1000 50 5 5 10 0 0\ncpu0 50 10 15 500 25 2 2 5 0 0\n";
    expect(parseMachineStat(text)).toEqual({ busySeconds: 1.7, totalSeconds: 12.2 });
  });

  it("windowCpu subtracts the snapshots", () => {
    // [pid/tid, group, CPU seconds] per live thread.
    const snap = (at: number, server: number, threads: [string, string, number][], busy: number) => ({
      at,
      server,
      serverSystem: server / 4,
      serverThreads: new Map(threads.map(([key, group, seconds]) => [key, { group, seconds }])),
      engine: at / 1000 + 1,
      client: at / 4000 + 2.75,
      machineBusy: busy,
    });
    const a = snap(
      1000,
      1,
      [
        ["7/7", "main", 0.5],
        ["7/9", "V8 workers", 0.25],
        ["7/11", "libuv pool", 0.125], // ends inside the window: missing
      ],
      10,
    );
    const b = snap(
      3000,
      2,
      [
        ["7/7", "main", 1],
        ["7/9", "V8 workers", 0.5],
        ["7/10", "V8 workers", 0.125], // started inside the window: from zero
      ],
      14,
    );
    expect(windowCpu(a, b)).toEqual({
      wallSeconds: 2,
      serverSeconds: 1,
      serverSystemSeconds: 0.25,
      serverThreadSeconds: { main: 0.5, "V8 workers": 0.375 },
      engineSeconds: 2,
      clientSeconds: 0.5,
      machineBusySeconds: 4,
    });
  });
});

function run(
  side: "vllm" | "ours",
  round: number,
  over: Record<string, unknown>,
  serverSeconds: number,
): SideRun {
  return {
    side,
    round,
    seed: round,
    client: parseBenchResult(benchJson(over)),
    cpu: {
      wallSeconds: 2,
      serverSeconds,
      serverSystemSeconds: serverSeconds / 3,
      serverThreadSeconds: { main: serverSeconds * 0.75, "ZeroMQ I/O": serverSeconds * 0.25 },
      engineSeconds: 1.9,
      clientSeconds: 0.4,
      machineBusySeconds: 3.8,
    },
  };
}

describe("summarizeWorkload", () => {
  const [workload] = selectWorkloads({ quick: true, only: ["completions-64"] });
  const result = summarizeWorkload(
    workload!,
    [
      run("vllm", 1, { output_throughput: 100, p99_itl_ms: 4 }, 0.6),
      run("ours", 1, { output_throughput: 150, p99_itl_ms: 5 }, 0.3),
      run("ours", 2, { output_throughput: 250, p99_itl_ms: 3 }, 0.3),
      run("vllm", 2, { output_throughput: 100, p99_itl_ms: 4 }, 0.6),
    ],
    2,
  );

  it("averages the rounds per side and divides ours by vLLM's per metric", () => {
    expect(result.ours.outputTokS).toBe(200);
    expect(result.ratios.outputTokS).toBe(2);
    expect(result.ratios.itlP99Ms).toBe(1);
    // 0.3 s / 6 tokens = 50,000 µs vs 100,000 µs.
    expect(result.ours.serverCpuUsPerToken).toBeCloseTo(50_000);
    expect(result.ratios.serverCpuUsPerToken).toBeCloseTo(0.5);
    expect(result.ours.serverKernelUsPerToken).toBeCloseTo(50_000 / 3);
    expect(result.threads.ours.map((t) => t.group)).toEqual(["main", "ZeroMQ I/O"]); // largest first
    expect(result.threads.ours[0]!.usPerToken).toBeCloseTo(37_500);
    expect(result.threads.ours[1]!.usPerToken).toBeCloseTo(12_500);
    expect(result.ours.engineCores).toBeCloseTo(0.95);
    expect(result.correctness).toHaveLength(2);
    expect(result.correctness.every((c) => c.ok)).toBe(true);
    expect(result.limitedBy.ours).toMatch(/^engine 0\.95 \(near 1 core\)/);
  });

  it("renders the ratio table with a row per workload, worse marked", () => {
    const doc: VsVllmDocument = {
      tool: "@vllm-engine-core/bench vs-vllm",
      command: "x",
      generatedAt: "now",
      quick: true,
      rounds: 2,
      cores: 2,
      loadAvg: { start: [0], end: [0] },
      durationS: 1,
      engine: { max_num_seqs: 256 },
      workloads: [{ ...result, ratios: { ...result.ratios, itlP99Ms: 1.26 } }],
      errors: [],
    };
    const md = renderMarkdown(doc);
    const row = md.split("\n").find((l) => l.startsWith("| completions, 64 streams | 2.00×"));
    expect(row).toContain("1.26× (worse)");
    expect(row).toContain("0.50×");
    const figures = md.split("\n").find((l) => l.startsWith("| completions, 64 streams | ours |"));
    expect(figures).toContain("| 50000.0 µs (16666.7 µs) |");
    expect(md).toContain("| completions, 64 streams | ours | main 37500.0 · ZeroMQ I/O 12500.0 |");
    expect(renderMarkdown({ ...doc, workloads: [], skipped: "no kit" })).toContain("**Skipped**: no kit");
  });
});

describe("limitedBy", () => {
  const f = (over: Partial<SideFigures>): SideFigures => ({
    outputTokS: 1,
    ttftP50Ms: 1,
    ttftP99Ms: 1,
    itlP50Ms: 1,
    itlP99Ms: 1,
    e2elP50Ms: 1,
    e2elP99Ms: 1,
    serverCpuUsPerToken: 1,
    serverKernelUsPerToken: 0.3,
    serverCores: 0.2,
    engineCores: 0.3,
    clientCores: 0.1,
    machineCores: 0.6,
    chunksPerRequest: 1,
    ...over,
  });
  it("names a process near a core, else the machine when all cores are busy (with others' share), else the step pace", () => {
    expect(limitedBy(f({ serverCores: 0.97, machineCores: 1.4 }), 2)).toBe("server 0.97 (near 1 core)");
    expect(limitedBy(f({ serverCores: 0.7, engineCores: 0.6, clientCores: 0.3, machineCores: 1.9 }), 2)).toBe(
      "all 2 cores busy (1.90: server 0.70, engine 0.60, client 0.30); other processes 0.30 cores",
    );
    expect(limitedBy(f({}), 2)).toMatch(
      /^no process near a core \(busiest: engine 0\.30\): the engine's step pace$/,
    );
  });
});

describe("compareRuns", () => {
  it("tells other ids (different at both ends) from the same ids detokenized differently (a common start or end)", () => {
    const a = parseBenchResult(benchJson({ generated_texts: [" a b c", " d e f"] }));
    const otherIds = parseBenchResult(benchJson({ generated_texts: [" a b c", "xyz"] }));
    const c1 = compareRuns(a, otherIds);
    expect(c1).toMatchObject({
      textsEqual: 1,
      textsDifferentIds: 1,
      textsDetokenizedDifferently: 0,
      ok: true,
    });
    expect(correctnessLine(c1)).toBe(
      "ok: completed 2 both, failed 0 both, output tokens 6 both, texts equal 1/2, 1 differ at both ends (other ids: the prompt tokenized differently)",
    );
    const detok = parseBenchResult(benchJson({ generated_texts: [" a b c", " d e\uFFFD"] }));
    const c2 = compareRuns(a, detok);
    expect(c2).toMatchObject({ textsDetokenizedDifferently: 1, ok: false });
    expect(c2.firstDivergence).toEqual({ request: 1, at: 4, vllm: " d e f", ours: " d e\uFFFD" });
    expect(correctnessLine(c2)).toMatch(
      /first: request 1 at character 4, vLLM " d e f" vs ours " d e\uFFFD"$/,
    );
    // Seen with vLLM's server: the same ids, a different start (a first token that is part of a UTF-8 character).
    const start = parseBenchResult(benchJson({ generated_texts: [" a b c", "\uFFFD e f"] }));
    expect(compareRuns(a, start)).toMatchObject({
      textsDifferentIds: 0,
      textsDetokenizedDifferently: 1,
      firstDivergence: { request: 1, at: 0 },
    });
    // The text package's documented UTF-8 edges (packages/text README) are told apart, and stay ok.
    const vllmEcho = parseBenchResult(benchJson({ generated_texts: [" a b c", "prompt text\uFFFD d e f"] }));
    const oursAfterPrompt = parseBenchResult(benchJson({ generated_texts: [" a b c", "\uFFFD d e f"] }));
    const edge1 = compareRuns(vllmEcho, oursAfterPrompt);
    expect(edge1).toMatchObject({
      textsAtUtf8Edge: { promptEcho: 1, heldCharacters: 0 },
      textsDetokenizedDifferently: 0,
      ok: true,
    });
    expect(correctnessLine(edge1)).toBe(
      "ok: completed 2 both, failed 0 both, output tokens 6 both, texts equal 1/2, 1 differ at a documented UTF-8 edge (1 where vLLM repeats the prompt's text (the prompt ends inside a character))",
    );
    const held = parseBenchResult(benchJson({ generated_texts: [" a b c", " d e f "] }));
    expect(compareRuns(a, held)).toMatchObject({
      textsAtUtf8Edge: { promptEcho: 0, heldCharacters: 1 },
      ok: true,
    });
    // Not an edge: a U+FFFD, or more than a held character's worth, at the end of ours.
    for (const text of [" d e f \uFFFD", " d e f and much more text"]) {
      const c = compareRuns(a, parseBenchResult(benchJson({ generated_texts: [" a b c", text] })));
      expect(c).toMatchObject({
        textsAtUtf8Edge: { heldCharacters: 0 },
        textsDetokenizedDifferently: 1,
        ok: false,
      });
    }
    const fewer = parseBenchResult(benchJson({ output_lens: [3, 2], total_output_tokens: 5 }));
    const c3 = compareRuns(a, fewer);
    expect(c3.ok).toBe(false);
    expect(correctnessLine(c3)).toMatch(/^MISMATCH: .*output tokens vLLM 6, ours 5 \(1 requests differ\)/);
  });
});

describe("oursServerSetup", () => {
  it("reads the API-server count, the Node.js binary and both servers' stream interval; refuses bad numbers", () => {
    expect(oursServerSetup({})).toEqual({ apiServers: 1, node: process.execPath, streamInterval: 1 });
    expect(
      oursServerSetup({ VS_VLLM_API_SERVERS: "2", VS_VLLM_OURS_NODE: "/n", VS_VLLM_STREAM_INTERVAL: "8" }),
    ).toEqual({ apiServers: 2, node: "/n", streamInterval: 8 });
    expect(() => oursServerSetup({ VS_VLLM_STREAM_INTERVAL: "0" })).toThrow(/VS_VLLM_STREAM_INTERVAL/);
    expect(() => oursServerSetup({ VS_VLLM_API_SERVERS: "1.5" })).toThrow(/VS_VLLM_API_SERVERS/);
  });
});
