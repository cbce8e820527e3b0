// `bench` against the mock engine, whose step time is deterministic: the reported TPOT, ITL and throughput must
// agree with what the step time implies. Each engine step takes `stepMs` (plus timer lateness) and gives every
// running request one token, so:
//   - TPOT and the median ITL are one step: in [stepMs, 1.5 × stepMs + 2 ms] (the upper margin absorbs timer
//     lateness and a loaded CI machine);
//   - output throughput cannot exceed concurrency × 1000 / stepMs tokens/s, and with every slot busy it stays
//     above half of that (a slot idles about one step between two requests of `outputLen` steps);
//   - the duration is at least (prompts / concurrency) × outputLen steps.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { errorLines, runCli } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "vllm-engine-core-cli-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Result {
  completed: number;
  failed: number;
  duration: number;
  total_input_tokens: number;
  total_output_tokens: number;
  request_throughput: number;
  output_throughput: number;
  total_token_throughput: number;
  median_tpot_ms: number;
  mean_tpot_ms: number;
  median_itl_ms: number;
  p99_ttft_ms: number;
  mean_ttft_ms: number;
  mean_e2el_ms: number;
  input_lens: number[];
  output_lens: number[];
  start_times: number[];
  itls: number[][];
  request_rate: number | string;
  max_concurrency: number | null;
  num_prompts: number;
}

describe.concurrent("bench", () => {
  test("throughput and TPOT agree with the mock engine's step time", async () => {
    const stepMs = 20;
    const [prompts, concurrency, outputLen] = [16, 4, 20];
    const file = join(dir, "step.json");
    const r = await runCli([
      "bench",
      "--mock",
      "--mock-step-ms",
      String(stepMs),
      "--num-prompts",
      String(prompts),
      "--max-concurrency",
      String(concurrency),
      "--input-len",
      "16",
      "--output-len",
      String(outputLen),
      "--json",
      file,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.leftRunning).toEqual([]);
    const result = JSON.parse(readFileSync(file, "utf8")) as Result;
    expect(result).toMatchObject({
      completed: prompts,
      failed: 0,
      total_input_tokens: prompts * 16,
      total_output_tokens: prompts * outputLen,
      num_prompts: prompts,
      max_concurrency: concurrency,
      request_rate: "inf",
    });
    expect(result.output_lens).toEqual(new Array(prompts).fill(outputLen));
    for (const tpot of [result.median_tpot_ms, result.mean_tpot_ms, result.median_itl_ms]) {
      expect(tpot).toBeGreaterThanOrEqual(stepMs * 0.98);
      expect(tpot).toBeLessThanOrEqual(stepMs * 1.5 + 2);
    }
    const ceiling = (concurrency * 1000) / stepMs;
    expect(result.output_throughput).toBeLessThanOrEqual(ceiling * 1.02);
    expect(result.output_throughput).toBeGreaterThanOrEqual(ceiling * 0.5);
    expect(result.duration).toBeGreaterThanOrEqual(((prompts / concurrency) * outputLen * stepMs) / 1000);
    // The figures are consistent with each other (vLLM's definitions).
    expect(result.request_throughput).toBeCloseTo(prompts / result.duration, 6);
    expect(result.output_throughput).toBeCloseTo((prompts * outputLen) / result.duration, 6);
    expect(result.total_token_throughput).toBeCloseTo((prompts * (16 + outputLen)) / result.duration, 6);
    expect(result.itls.every((l) => l.length === outputLen - 1)).toBe(true);
    expect(result.mean_e2el_ms).toBeGreaterThan(result.mean_ttft_ms);

    // The summary on stdout: vLLM's layout, the same figures.
    const summary = r.stdout.slice(r.stdout.indexOf("="));
    const lines = summary.trim().split("\n");
    expect(lines[0]).toBe("============ Serving Benchmark Result ============");
    expect(lines.at(-1)).toBe("=".repeat(50));
    const value = (label: string) => {
      const line = lines.find((l) => l.startsWith(label));
      expect(line, label).toBeDefined();
      expect(line!.indexOf(line!.slice(40).trim())).toBe(41); // "{:<40} {:<10}"
      return Number(line!.slice(40));
    };
    expect(value("Successful requests:")).toBe(prompts);
    expect(value("Failed requests:")).toBe(0);
    expect(value("Maximum request concurrency:")).toBe(concurrency);
    expect(value("Total generated tokens:")).toBe(prompts * outputLen);
    expect(value("Benchmark duration (s):")).toBeCloseTo(result.duration, 2);
    expect(value("Output token throughput (tok/s):")).toBeCloseTo(result.output_throughput, 2);
    expect(value("Median TPOT (ms):")).toBeCloseTo(result.median_tpot_ms, 2);
    expect(value("P99 TTFT (ms):")).toBeCloseTo(result.p99_ttft_ms, 2);
    for (const header of [
      "---------------Time to First Token----------------",
      "-----Time per Output Token (excl. 1st token)------",
      "---------------Inter-token Latency----------------",
      "----------------End-to-end Latency----------------",
    ]) {
      expect(lines).toContain(header);
    }
    // Not a terminal: plain progress lines on stderr, ending at 100%.
    expect(r.stderr).toMatch(/^bench: 16\/16 requests done \(100%\), [\d.]+ s$/m);
  });

  test("--request-rate: Poisson arrivals spread the sends over num-prompts / rate seconds", async () => {
    const file = join(dir, "rate.json");
    const [prompts, rate] = [20, 25];
    const r = await runCli([
      "bench",
      "--mock",
      "--mock-step-ms",
      "2",
      "--num-prompts",
      String(prompts),
      "--request-rate",
      String(rate),
      "--input-len",
      "8",
      "--output-len",
      "4",
      "--seed",
      "3",
      "--warmup",
      "3",
      "--no-progress",
      "--json",
      file,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Warming up with 3 requests\.\.\.\nWarmup run completed\.$/m);
    expect(r.stdout).toMatch(/^Traffic request rate: 25\nBurstiness factor: 1\.0 \(Poisson process\)$/m);
    expect(r.stdout).toMatch(/^Request rate configured \(RPS\): +25\.00$/m);
    expect(errorLines(r.stderr)).toEqual([`results written to ${file}`]); // --no-progress: no progress lines
    const result = JSON.parse(readFileSync(file, "utf8")) as Result;
    expect(result.completed).toBe(prompts); // warm-up requests are not counted
    // vLLM rescales the arrivals so the last send is at exactly num_prompts / rate.
    const sends = result.start_times.map((t) => t - Math.min(...result.start_times));
    const span = Math.max(...sends);
    expect(span).toBeGreaterThan((prompts / rate) * 0.75);
    expect(span).toBeLessThan(prompts / rate + 0.5);
    expect(result.duration).toBeGreaterThanOrEqual(prompts / rate);
    // Poisson: the gaps are not all equal.
    const sorted = [...sends].sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((t, i) => t - sorted[i]!);
    expect(Math.max(...gaps) - Math.min(...gaps)).toBeGreaterThan(0.02);
  });

  test("--range-ratio samples lengths around the means; the same --seed gives the same prompts", async () => {
    const run = async (name: string) => {
      const file = join(dir, name);
      const r = await runCli([
        "bench",
        "--mock",
        "--mock-step-ms",
        "0",
        "--num-prompts",
        "30",
        "--random-input-len",
        "20",
        "--random-output-len",
        "10",
        "--random-range-ratio",
        "0.5",
        "--seed",
        "11",
        "--no-progress",
        "--json",
        file,
      ]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(readFileSync(file, "utf8")) as Result;
    };
    const [a, b] = await Promise.all([run("ratio-a.json"), run("ratio-b.json")]);
    expect(a.input_lens).toEqual(b.input_lens);
    expect(a.output_lens).toEqual(b.output_lens);
    expect(Math.min(...a.input_lens)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...a.input_lens)).toBeLessThanOrEqual(30);
    expect(new Set(a.input_lens).size).toBeGreaterThan(5);
    expect(Math.min(...a.output_lens)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...a.output_lens)).toBeLessThanOrEqual(15);
  });
});
