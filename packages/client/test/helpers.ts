import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import {
  type CallRequest,
  EngineCoreClient,
  type EngineCoreClientConfig,
  type EngineCoreOutput,
} from "../src/index.js";

/** The path of a test fixture (`test/fixtures/<name>`), e.g. a worker thread's script. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

export function ipcAddress(tag: string): string {
  return `ipc://${join(tmpdir(), `vec-client-${tag}-${randomUUID().slice(0, 8)}.sock`)}`;
}

export interface Harness {
  client: EngineCoreClient;
  engine: MockEngineProcess;
  handshakeAddress: string;
  close(): Promise<void>;
}

/**
 * Starts the mock engine as a child process and connects a client to it (handshake-owner mode).
 * `transportTuning` adds to the handshake-owner transport (e.g. `vanishGraceMs`).
 */
export async function connectToMockEngine(
  options: Partial<MockEngineOptions> & { engineCount?: number } = {},
  clientConfig: Partial<EngineCoreClientConfig> = {},
  transportTuning: { vanishGraceMs?: number } = {},
): Promise<Harness> {
  const handshakeAddress = ipcAddress("hs");
  const engineCount = options.engineCount ?? options.engineIndices?.length ?? 1;
  const engineIndices = options.engineIndices ?? Array.from({ length: engineCount }, (_, i) => i);
  const engine = await startMockEngine({ stepMs: 2, ...options, handshakeAddress, engineIndices });
  let client: EngineCoreClient;
  try {
    client = await EngineCoreClient.connect({
      transport: {
        mode: "handshake-owner",
        handshakeAddress,
        engineCount,
        readyTimeoutMs: 20_000,
        ...transportTuning,
      },
      ...clientConfig,
    });
  } catch (error) {
    await engine.stop();
    throw error;
  }
  return {
    client,
    engine,
    handshakeAddress,
    async close() {
      await client.shutdown();
      await engine.stop();
    },
  };
}

export function chatRequest(
  requestId: string,
  maxTokens: number,
  extra: Partial<CallRequest> = {},
): CallRequest {
  return {
    requestId,
    promptTokenIds: [1, 2, 3, requestId.length],
    samplingParams: { maxTokens, temperature: 0.7 },
    ...extra,
  };
}

export async function collect(
  stream: AsyncIterable<EngineCoreOutput>,
): Promise<{ tokens: number[]; last: EngineCoreOutput }> {
  const tokens: number[] = [];
  let last: EngineCoreOutput | undefined;
  for await (const output of stream) {
    tokens.push(...output.newTokenIds);
    last = output;
  }
  if (last === undefined) throw new Error("stream ended without any output");
  return { tokens, last };
}
