// A request the engine finishes with finish reason ERROR is answered as vLLM's server answers it
// (GenerationError, vllm/entrypoints/openai/generate/base/serving.py `_raise_if_error`): HTTP 500
// InternalServerError "Internal server error", or in a stream an error event then [DONE]; never a 200 with
// an empty completion and `finish_reason: "error"`. The engine client given to the server is the real one
// against the mock engine, wrapped so that each request's first output becomes what vLLM's engine sends for
// a request it fails before generating (`_send_error_outputs_to_client`, vllm/v1/engine/core.py): a final
// output with no tokens and finish reason ERROR (the rest of the request is aborted on the engine).
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EngineCoreClient, type EngineCoreOutput, FinishReason } from "@vllm-engine-core/client";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../src/index.js";
import { clientWith, MODEL, QWEN3_DIR, qwen3 } from "./helpers.js";

const ERROR_BODY = {
  error: { message: "Internal server error", type: "InternalServerError", param: null, code: 500 },
};

describe("a request the engine finishes with ERROR", () => {
  let engine: MockEngineProcess;
  let client: EngineCoreClient;
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    const handshakeAddress = `ipc://${join(tmpdir(), `vec-srv-${randomUUID().slice(0, 8)}.sock`)}`;
    engine = await startMockEngine({ stepMs: 2, echoPrompt: true, handshakeAddress });
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    const real = client;
    const failing = clientWith(real, {
      async call(request, options) {
        const stream = await real.call(request, options);
        const next = stream.next.bind(stream);
        let failed = false;
        stream.next = async (): Promise<IteratorResult<EngineCoreOutput>> => {
          if (failed) return { value: undefined, done: true };
          const result = await next();
          if (result.done) return result;
          failed = true;
          await stream.return();
          return {
            value: { ...result.value, newTokenIds: [], finishReason: FinishReason.ERROR },
            done: false,
          };
        };
        return stream;
      },
    });
    app = createServer({ client: failing, tokenizer: qwen3(), modelPath: QWEN3_DIR, servedModelName: MODEL });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    await app?.close();
    await client?.shutdown();
    await engine?.stop();
  });

  const post = (path: string, body: object) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const chat = { model: MODEL, messages: [{ role: "user", content: "Hello!" }], max_tokens: 4 };
  const completion = { model: MODEL, prompt: "Hello", max_tokens: 4 };

  it("non-streaming chat and completion: 500 InternalServerError, as vLLM's GenerationError", async () => {
    for (const [path, body] of [
      ["/v1/chat/completions", chat],
      ["/v1/completions", completion],
    ] as const) {
      const res = await post(path, body);
      expect(res.status, path).toBe(500);
      expect(await res.json()).toEqual(ERROR_BODY);
    }
  });

  it("streaming chat and completion: the error event then [DONE], no finishing chunk", async () => {
    for (const [path, body] of [
      ["/v1/chat/completions", chat],
      ["/v1/completions", completion],
    ] as const) {
      const res = await post(path, { ...body, stream: true, stream_options: { include_usage: true } });
      expect(res.status, path).toBe(200);
      const events = (await res.text())
        .split("\n\n")
        .filter((e) => e !== "")
        .map((e) => e.replace(/^data: /, ""));
      expect(events.at(-1), path).toBe("[DONE]");
      expect(JSON.parse(events.at(-2)!), path).toEqual(ERROR_BODY);
      // Before it, at most the chat's role chunk: no text, no finish_reason "error", no usage chunk.
      const before = events.slice(0, -2).map((e) => JSON.parse(e));
      expect(before.length, path).toBe(path === "/v1/chat/completions" ? 1 : 0);
      expect(JSON.stringify(before)).not.toContain('"finish_reason":"error"');
    }
  });
});
