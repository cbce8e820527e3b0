import { spawn } from "node:child_process";
import { Worker } from "node:worker_threads";
import { expectedTokens, removeStaleIpcFiles } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { FinishReason } from "../src/index.js";
import { chatRequest, collect, connectToMockEngine, fixture, type Harness, ipcAddress } from "./helpers.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("threads and process lifetime", () => {
  it("a stream can be consumed on another thread through the client's handle", async () => {
    harness = await connectToMockEngine({ stepMs: 2 });
    const { client } = harness;
    const request = chatRequest("from-worker", 7);
    const worker = new Worker(fixture("consumer-worker.mjs"), {
      workerData: { handle: client.handle, request },
      // Plain Node resolution (built dist), not the test runner's source condition.
      execArgv: [],
    });
    // Listened for before the message is awaited: a worker's last message and its exit can be emitted in one
    // turn, so a listener added after `await`ing the message may miss the exit and wait forever.
    const exited = new Promise((r) => worker.once("exit", r));
    const result = await new Promise<{ tokens: number[]; finishReason: number; loadedZeromq: boolean }>(
      (resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      },
    );
    await exited;
    expect(result.tokens).toEqual(expectedTokens("from-worker", request.promptTokenIds!, 7));
    expect(result.finishReason).toBe(FinishReason.LENGTH);
    expect(result.loadedZeromq).toBe(false);
    // The connection keeps working here after the worker detached and exited.
    expect((await collect(await client.call(chatRequest("after-worker", 3)))).tokens).toHaveLength(3);
  });

  it("after shutdown the process exits by itself", async () => {
    const handshakeAddress = ipcAddress("exit");
    const child = spawn(process.execPath, [fixture("exit-by-itself.mjs"), handshakeAddress], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once("exit", (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    removeStaleIpcFiles([handshakeAddress]); // left behind only if the child was killed
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    expect(JSON.parse(stdout.trim())).toEqual({ tokens: 5 });
  });
});
