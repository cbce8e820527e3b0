// Shared building blocks of the reliability scenarios: addresses, mock engines as child processes,
// clients connected to them, stream collection that records how a stream ended, and bounded waits.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EngineCoreClient, type EngineCoreClientConfig } from "@vllm-engine-core/client";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import type { EngineCoreOutput } from "@vllm-engine-core/protocol";

const ipcPaths = new Set<string>();

/** A fresh socket path in the temp dir, not remembered anywhere (the caller removes its file). */
export function ipcPath(tag: string): string {
  return join(tmpdir(), `vec-rel-${tag}-${randomUUID().slice(0, 8)}.sock`);
}

/** A fresh ipc:// endpoint in the temp dir; `removeIpcFiles()` deletes the files these leave behind. */
export function ipcAddress(tag: string): string {
  const path = ipcPath(tag);
  ipcPaths.add(path);
  return `ipc://${path}`;
}

/**
 * Deletes the socket files of every ipc address handed out so far. The transport removes the files it bound
 * when it closes; this catches the ones left by a killed process or by a test that failed before closing.
 */
export function removeIpcFiles(): void {
  for (const path of ipcPaths) rmSync(path, { force: true });
  ipcPaths.clear();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One request as `call()` takes it; the prompt depends on the id so token streams differ per request. */
export function chatRequest(requestId: string, maxTokens: number) {
  return {
    requestId,
    promptTokenIds: [1, 2, 3, requestId.length],
    samplingParams: { maxTokens, temperature: 0.7 },
  };
}

export interface StreamOutcome {
  requestId: string;
  tokens: number[];
  finishReason: number | null;
  error: Error | undefined;
  /** `performance.now()` when the stream ended (final output or error). */
  endedAt: number;
  /** Number of outputs that carried a finishReason (must be ≤ 1). */
  finalOutputs: number;
  /** Outputs received after the final one (must be 0). */
  afterFinal: number;
  /** Longest pause between two consecutive outputs, in ms. */
  maxGapMs: number;
}

/** Drains a stream and records how it ended instead of throwing; `onOutput` sees every output. */
export async function drain(
  requestId: string,
  stream: AsyncIterable<EngineCoreOutput>,
  onOutput?: (output: EngineCoreOutput) => void,
): Promise<StreamOutcome> {
  const outcome: StreamOutcome = {
    requestId,
    tokens: [],
    finishReason: null,
    error: undefined,
    endedAt: 0,
    finalOutputs: 0,
    afterFinal: 0,
    maxGapMs: 0,
  };
  let lastAt: number | undefined;
  try {
    for await (const output of stream) {
      const now = performance.now();
      if (lastAt !== undefined) outcome.maxGapMs = Math.max(outcome.maxGapMs, now - lastAt);
      lastAt = now;
      onOutput?.(output);
      if (outcome.finalOutputs > 0) outcome.afterFinal += 1;
      outcome.tokens.push(...output.newTokenIds);
      if (output.finishReason != null) {
        outcome.finalOutputs += 1;
        outcome.finishReason = output.finishReason;
      }
    }
  } catch (error) {
    outcome.error = error as Error;
  }
  outcome.endedAt = performance.now();
  return outcome;
}

/** Starts one mock-engine child process per entry, all dialing `handshakeAddress`. */
export async function startEngines(
  handshakeAddress: string,
  processes: readonly Partial<MockEngineOptions>[],
): Promise<MockEngineProcess[]> {
  const settled = await Promise.allSettled(
    processes.map((options) => startMockEngine({ stepMs: 2, ...options, handshakeAddress })),
  );
  const started = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failure = settled.find((s) => s.status === "rejected");
  if (failure) {
    await stopAll(started);
    throw failure.reason;
  }
  return started;
}

export async function stopAll(engines: readonly MockEngineProcess[]): Promise<void> {
  await Promise.all(engines.map((engine) => engine.stop()));
}

export interface Setup {
  client: EngineCoreClient;
  engines: MockEngineProcess[];
  handshakeAddress: string;
  close(): Promise<void>;
}

/**
 * Starts the given mock-engine processes (each with its own `engineIndices`) and connects one client in
 * handshake-owner mode expecting every engine they host.
 */
export async function connectEngines(
  processes: readonly Partial<MockEngineOptions>[],
  transport: Partial<{ readyTimeoutMs: number; localOutputAddress: string }> = {},
  clientConfig: Partial<EngineCoreClientConfig> = {},
): Promise<Setup> {
  const handshakeAddress = ipcAddress("hs");
  const engineCount = processes.reduce((n, p) => n + (p.engineIndices?.length ?? 1), 0);
  const engines = await startEngines(handshakeAddress, processes);
  let client: EngineCoreClient;
  try {
    client = await EngineCoreClient.connect({
      transport: {
        mode: "handshake-owner",
        handshakeAddress,
        engineCount,
        readyTimeoutMs: transport.readyTimeoutMs ?? 20_000,
        ...(transport.localOutputAddress === undefined
          ? {}
          : { localOutputAddress: transport.localOutputAddress }),
      },
      ...clientConfig,
    });
  } catch (error) {
    await stopAll(engines);
    throw error;
  }
  return {
    client,
    engines,
    handshakeAddress,
    async close() {
      await client.shutdown();
      await stopAll(engines);
    },
  };
}

export interface Tracked {
  requestId: string;
  engineIndex: number;
  /** Resolves with the first output (or when the stream ends without one). */
  firstOutput: Promise<void>;
  outcome: Promise<StreamOutcome>;
}

/** Calls `client.call(request)` and drains the stream in the background. */
export async function track(
  client: EngineCoreClient,
  request: Parameters<EngineCoreClient["call"]>[0],
): Promise<Tracked> {
  const stream = await client.call(request);
  let first!: () => void;
  const firstOutput = new Promise<void>((resolve) => {
    first = resolve;
  });
  const outcome = drain(request.requestId, stream, () => first()).finally(() => first());
  return { requestId: request.requestId, engineIndex: stream.engineIndex, firstOutput, outcome };
}

/**
 * Waits until no engine of `client` has a running request, using the engines' own view: vLLM's (and the
 * mock's) `reset_prefix_cache` returns false while running requests hold KV blocks. Proves that every
 * request a test dropped was finished or aborted on the engine, not just forgotten by the client.
 */
export async function waitForIdleEngines(client: EngineCoreClient, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await client.resetPrefixCache()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}
