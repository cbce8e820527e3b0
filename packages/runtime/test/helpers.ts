// Shared test helpers: addresses, requests, sinks that collect a stream, worker threads driven by RPC.
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import { type EngineCoreOutput, type EngineCoreRequest, FinishReason } from "@vllm-engine-core/protocol";
import { installRuntimeHost, type RequestSink } from "../src/index.ts";

export function ipcAddress(tag: string): string {
  return `ipc://${join(tmpdir(), `vec-rt-${tag}-${randomUUID().slice(0, 8)}.sock`)}`;
}

export const PROMPT = [1, 2, 3];

export function request(
  requestId: string,
  maxTokens: number,
  extra: Partial<EngineCoreRequest> = {},
): EngineCoreRequest {
  return {
    requestId,
    promptTokenIds: PROMPT,
    mmFeatures: null,
    samplingParams: { maxTokens },
    poolingParams: null,
    arrivalTime: 0,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
    ...extra,
  };
}

export interface Collected {
  tokens: number[];
  outputs: EngineCoreOutput[];
  /** One entry per sink.outputs call. */
  batches: { size: number; engineIndex: number }[];
  finishReason: number | null;
  /** The engine index `aborted` was called with (a client abort ended the request), or undefined. */
  aborted: number | undefined;
  error: Error | undefined;
}

/** A sink that collects one request's stream; `done` settles on the final output or the failure. */
export function collector(): { sink: RequestSink; result: Collected; done: Promise<Collected> } {
  const result: Collected = {
    tokens: [],
    outputs: [],
    batches: [],
    finishReason: null,
    aborted: undefined,
    error: undefined,
  };
  let finish!: () => void;
  const done = new Promise<Collected>((resolve) => {
    finish = () => resolve(result);
  });
  const end = (output: EngineCoreOutput) => {
    if (output.finishReason !== null) {
      result.finishReason = output.finishReason;
      finish();
    }
  };
  const sink: RequestSink = {
    output(output, engineIndex) {
      result.batches.push({ size: 1, engineIndex });
      result.outputs.push(output);
      result.tokens.push(...output.newTokenIds);
      end(output);
    },
    aborted(engineIndex) {
      result.aborted = engineIndex;
      result.finishReason = FinishReason.ABORT;
      finish();
    },
    fail(error) {
      result.error = error;
      finish();
    },
  };
  return { sink, result, done };
}

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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Mock engines for one handshake address; each entry of `processes` is one child process. */
export async function startEngines(
  handshakeAddress: string,
  processes: Partial<MockEngineOptions>[],
): Promise<MockEngineProcess[]> {
  return Promise.all(
    processes.map((options) => startMockEngine({ stepMs: 2, ...options, handshakeAddress })),
  );
}

export async function stopAll(engines: readonly MockEngineProcess[]): Promise<void> {
  await Promise.all(engines.map((engine) => engine.stop()));
}

export const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export interface ThreadError {
  name: string;
  message: string;
  code?: string;
}

/** A worker thread running fixtures/thread.mjs (the runtime from dist), driven by RPC. */
export class TestThread {
  readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  readonly ready: Promise<void>;
  readonly exited: Promise<number>;

  constructor(options: { env?: Record<string, string> } = {}) {
    // Like an application that lets its worker threads connect first: the main thread hosts the runtime.
    installRuntimeHost();
    // Like an application thread: plain Node resolution to the built packages (the test process itself runs
    // with the source-first export condition, which a JS worker must not inherit).
    this.worker = new Worker(fixture("thread.mjs"), {
      execArgv: [],
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    });
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    this.ready.catch(() => {});
    this.exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.once("exit", (code) =>
      failReady(new Error(`test thread exited with code ${code} before it was ready`)),
    );
    this.worker.on(
      "message",
      (message: { ready?: true; id: number; ok: boolean; value: unknown; error: ThreadError }) => {
        if (message.ready) {
          markReady();
          return;
        }
        const call = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.ok) call?.resolve(message.value);
        else call?.reject(Object.assign(new Error(message.error.message), message.error));
      },
    );
    this.worker.on("error", (error) => {
      failReady(error);
      for (const call of this.pending.values()) call.reject(error);
    });
  }

  async call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    await this.ready;
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}
