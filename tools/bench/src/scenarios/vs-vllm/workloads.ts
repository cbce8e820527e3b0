// The workloads of the side-by-side (low, moderate and high concurrency, chat, long prompts, saturation):
// random prompts, `--ignore-eos`, streaming, one engine per side with max_num_seqs 256 and a 10 ms step, then
// step 0 with 512 streams for saturation. Low concurrency is where each engine step's fixed cost (thread
// wake-ups, one message decoded) is shared by the fewest tokens.

export type Endpoint = "completions" | "chat";

export interface Workload {
  /** Stable id, used by VS_VLLM_WORKLOADS and in the results. */
  readonly name: string;
  readonly title: string;
  readonly endpoint: Endpoint;
  /** `vllm bench serve --max-concurrency`. */
  readonly streams: number;
  /** `--num-prompts`. */
  readonly prompts: number;
  readonly inputLen: number;
  readonly outputLen: number;
  /** The model-free executor's emulated forward time per step. */
  readonly stepMs: number;
}

/** Engine flags shared by every workload and both sides. */
export const ENGINE = {
  maxNumSeqs: 256,
  maxModelLen: 4096,
  blockSize: 16,
  /** 256 MiB = 262,144 tokens of the tiny model: 32 × 2,112-token requests or 256 × 256 fit without preemption. */
  kvCacheBytes: 256 * 1024 * 1024,
} as const;

const FULL: readonly Workload[] = [
  {
    name: "completions-8",
    title: "completions, 8 streams",
    endpoint: "completions",
    streams: 8,
    prompts: 64,
    inputLen: 128,
    outputLen: 128,
    stepMs: 10,
  },
  {
    name: "completions-64",
    title: "completions, 64 streams",
    endpoint: "completions",
    streams: 64,
    prompts: 256,
    inputLen: 128,
    outputLen: 128,
    stepMs: 10,
  },
  {
    name: "completions-256",
    title: "completions, 256 streams",
    endpoint: "completions",
    streams: 256,
    prompts: 512,
    inputLen: 128,
    outputLen: 128,
    stepMs: 10,
  },
  {
    name: "chat-256",
    title: "chat, 256 streams",
    endpoint: "chat",
    streams: 256,
    prompts: 512,
    inputLen: 128,
    outputLen: 128,
    stepMs: 10,
  },
  {
    name: "long-32",
    title: "long prompts (2,048 in / 64 out), 32 streams",
    endpoint: "completions",
    streams: 32,
    prompts: 128,
    inputLen: 2048,
    outputLen: 64,
    stepMs: 10,
  },
  {
    name: "saturation-512",
    title: "completions, 512 streams, engine step 0 (saturation)",
    endpoint: "completions",
    streams: 512,
    prompts: 1024,
    inputLen: 128,
    outputLen: 128,
    stepMs: 0,
  },
];

/** The quick version: one wave of requests per run and a quarter of the output tokens. */
function quick(w: Workload): Workload {
  return { ...w, prompts: w.streams, outputLen: Math.max(16, w.outputLen / 4) };
}

/**
 * The workloads to run: all six (full or quick), or those named in `only` (ids, comma-separated in
 * VS_VLLM_WORKLOADS). An unknown name throws, listing the known ones.
 */
export function selectWorkloads(options: {
  quick: boolean;
  only?: readonly string[] | undefined;
}): Workload[] {
  const all = options.quick ? FULL.map(quick) : [...FULL];
  if (!options.only || options.only.length === 0) return all;
  return options.only.map((name) => {
    const found = all.find((w) => w.name === name);
    if (!found)
      throw new Error(`unknown vs-vllm workload "${name}"; known: ${all.map((w) => w.name).join(", ")}`);
    return found;
  });
}

/**
 * `--num-warmups` of the benchmark client: one wave at the run's concurrency (at most 256) before every
 * measured run, so that neither server is measured cold (V8 compiles our server's hot paths on its first
 * thousands of tokens; with 32 warm-up requests our first round cost 2× the CPU per token of the second).
 */
export function warmupRequests(w: Workload): number {
  return Math.min(w.streams, 256);
}
