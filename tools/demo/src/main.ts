#!/usr/bin/env node
// The demo: starts the mock engine as a child process, connects a client (all ZeroMQ I/O on the
// runtime thread), streams several concurrent requests with a live progress line, runs a few utility
// calls, prints a summary table, and exits 0 leaving nothing running.
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { EngineCoreClient, finishReasonName } from "@vllm-engine-core/client";
import { startMockEngine } from "@vllm-engine-core/mock-engine";

interface Args {
  requests: number;
  engines: number;
  stepMs: number;
  maxTokens: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { requests: 12, engines: 2, stepMs: 4, maxTokens: 192 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = Number(argv[i + 1]);
    const set = (key: keyof Args, min: number) => {
      if (!Number.isInteger(value) || value < min) {
        throw new Error(`${flag} expects an integer >= ${min}, got ${argv[i + 1]}`);
      }
      args[key] = value;
      i++;
    };
    if (flag === "--requests") set("requests", 1);
    else if (flag === "--engines") set("engines", 1);
    else if (flag === "--step-ms") set("stepMs", 0);
    else if (flag === "--max-tokens") set("maxTokens", 1);
    else if (flag === "--help" || flag === "-h") {
      console.log("usage: demo [--requests N] [--engines N] [--step-ms N] [--max-tokens N]");
      process.exit(0);
    } else throw new Error(`unknown flag ${flag} (try --help)`);
  }
  return args;
}

interface RequestStats {
  id: string;
  engine: number;
  tokens: number;
  finish: string;
  ttftMs: number;
  totalMs: number;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    `| ${r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(" | ")} |`;
  const sep = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [line(rows[0]!), sep, ...rows.slice(1).map(line)].join("\n");
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const handshakeAddress = `ipc://${join(tmpdir(), `vllm-engine-core-demo-${randomUUID().slice(0, 8)}.sock`)}`;
  console.log(`Starting the mock engine (${args.engines} engine(s), ${args.stepMs} ms per step) …`);
  const engine = await startMockEngine({
    handshakeAddress,
    engineIndices: Array.from({ length: args.engines }, (_, i) => i),
    stepMs: args.stepMs,
  });
  try {
    const connectStart = performance.now();
    const client = await EngineCoreClient.connect({
      transport: {
        mode: "handshake-owner",
        handshakeAddress,
        engineCount: args.engines,
        readyTimeoutMs: 20_000,
      },
      modelName: "mock-model",
    });
    console.log(
      `Connected in ${(performance.now() - connectStart).toFixed(0)} ms: ${client.engineCount} engine(s), ` +
        `vLLM ${client.vllmVersion}, dtype ${client.modelDtype}, max_model_len ${client.maxModelLen}\n` +
        `  input ${client.inputAddress}  output (one per engine) ${client.outputAddresses.join(", ")}`,
    );

    const sleeping = await client.isSleeping();
    const reset = await client.resetPrefixCache();
    const echoed = await client.callUtility("echo", ["ping"]);
    console.log(
      `Utilities: is_sleeping=${sleeping}, reset_prefix_cache=${reset}, echo → ${JSON.stringify(echoed)}`,
    );

    const started = performance.now();
    const stats: RequestStats[] = [];
    let delivered = 0;
    const target = Array.from({ length: args.requests }, (_, i) =>
      Math.max(1, Math.round(args.maxTokens * (0.5 + (i % 4) / 6))),
    );
    const totalTarget = target.reduce((a, b) => a + b, 0);
    const tty = process.stdout.isTTY;
    let lastPrinted = 0;
    const progress = (force = false) => {
      const now = performance.now();
      if (!force && now - lastPrinted < (tty ? 100 : 1000)) return;
      lastPrinted = now;
      const secs = (now - started) / 1000;
      const text = `  streaming: ${delivered}/${totalTarget} tokens, ${stats.length}/${args.requests} done, ${(delivered / Math.max(secs, 1e-3)).toFixed(0)} tok/s`;
      if (tty) process.stdout.write(`\r${text}   `);
      else console.log(text);
    };

    await Promise.all(
      target.map(async (maxTokens, i) => {
        const id = `demo-${i}`;
        const t0 = performance.now();
        let first = 0;
        let tokens = 0;
        let finish = "?";
        const stream = await client.call({
          requestId: id,
          promptTokenIds: [151644, 872, 198, 100 + i],
          samplingParams: { maxTokens, temperature: 0.8 },
        });
        for await (const output of stream) {
          if (first === 0 && output.newTokenIds.length > 0) first = performance.now();
          tokens += output.newTokenIds.length;
          delivered += output.newTokenIds.length;
          if (output.finishReason != null) finish = finishReasonName(output.finishReason);
          progress();
        }
        stats.push({
          id,
          engine: stream.engineIndex,
          tokens,
          finish,
          ttftMs: first - t0,
          totalMs: performance.now() - t0,
        });
      }),
    );
    progress(true);
    if (tty) process.stdout.write("\n");
    const wall = (performance.now() - started) / 1000;

    stats.sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
    const rows = [["request", "engine", "tokens", "finish", "TTFT ms", "time ms", "tokens/s"]];
    for (const s of stats) {
      rows.push([
        s.id,
        String(s.engine),
        String(s.tokens),
        s.finish,
        s.ttftMs.toFixed(1),
        s.totalMs.toFixed(0),
        (s.tokens / (s.totalMs / 1000)).toFixed(0),
      ]);
    }
    const totalTokens = stats.reduce((a, s) => a + s.tokens, 0);
    const ttfts = stats.map((s) => s.ttftMs).sort((a, b) => a - b);
    rows.push([
      "all",
      "-",
      String(totalTokens),
      "-",
      `p50 ${ttfts[Math.floor(ttfts.length / 2)]!.toFixed(1)}`,
      (wall * 1000).toFixed(0),
      (totalTokens / wall).toFixed(0),
    ]);
    console.log(`\n${table(rows)}\n`);

    await client.shutdown();
    const ok = totalTokens === totalTarget && stats.every((s) => s.finish === "length");
    console.log(ok ? "All requests completed." : "Some requests did not complete as expected.");
    process.exitCode = ok ? 0 : 1;
  } finally {
    await engine.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : error);
  process.exitCode = 1;
});
