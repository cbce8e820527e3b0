// `logit_bias` and `response_format` reach the engine as vLLM's frontend sends them (they used to be dropped
// silently: a client asking for JSON got free text). Driven with the official `openai` client; the engine
// client given to the server is the real one, wrapped to note each request's sampling parameters, against
// the mock engine in a child process (which decodes them off the wire).
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CallRequest, EngineCoreClient } from "@vllm-engine-core/client";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import type { FastifyInstance } from "fastify";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../src/index.js";
import { clientWith, MODEL, QWEN3_DIR, qwen3 } from "./helpers.js";

describe("logit_bias and response_format (openai client)", () => {
  let engine: MockEngineProcess;
  let client: EngineCoreClient;
  let app: FastifyInstance;
  let openai: OpenAI;
  const sent: CallRequest[] = [];
  const lastSampling = () => sent.at(-1)!.samplingParams as Record<string, unknown>;

  beforeAll(async () => {
    const handshakeAddress = `ipc://${join(tmpdir(), `vec-srv-${randomUUID().slice(0, 8)}.sock`)}`;
    engine = await startMockEngine({ stepMs: 2, echoPrompt: true, handshakeAddress });
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    const real = client;
    const noting = clientWith(real, {
      call(request, options) {
        sent.push(request);
        return real.call(request, options);
      },
    });
    app = createServer({ client: noting, tokenizer: qwen3(), modelPath: QWEN3_DIR, servedModelName: MODEL });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await client?.shutdown();
    await engine?.stop();
  });

  const messages = [{ role: "user" as const, content: "Hello!" }];

  it("logit_bias: token ids as integers, biases clamped to [-100, 100] (SamplingParams.from_optional)", async () => {
    const r = await openai.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 3,
      logit_bias: { "9707": 5.5, "151645": -500, "13": 250 },
    });
    expect(r.choices[0]!.finish_reason).toBe("length");
    expect(lastSampling().logitBias).toEqual({ "9707": 5.5, "151645": -100, "13": 100 });

    await openai.completions.create({ model: MODEL, prompt: "Hello", max_tokens: 2, logit_bias: { "1": 1 } });
    expect(lastSampling().logitBias).toEqual({ "1": 1 });
  });

  it("logit_bias with a key that is no token id: 400 with vLLM's message, param logit_bias", async () => {
    const error = await openai.chat.completions
      .create({ model: MODEL, messages, logit_bias: { hello: 1, "12": 2 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const e = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.message).toContain(
      "logit_bias contains key(s) that cannot be converted to integer token IDs: ['hello']",
    );
    expect((e.error as { param?: string }).param).toBe("logit_bias");
  });

  it("response_format: json_object, json_schema and text as vLLM's structured_outputs_from_response_format", async () => {
    await openai.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 2,
      response_format: { type: "json_object" },
    });
    expect(lastSampling().structuredOutputs).toEqual({ jsonObject: true });

    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 2,
      stream: true,
      response_format: { type: "json_schema", json_schema: { name: "thing", schema } },
    });
    for await (const _ of stream) {
      // drain
    }
    expect(lastSampling().structuredOutputs).toEqual({ json: schema });

    await openai.chat.completions.create({
      model: MODEL,
      messages,
      max_tokens: 2,
      response_format: { type: "text" },
    });
    expect(lastSampling().structuredOutputs).toBeUndefined();
  });

  it("response_format reaches the engine with the backend vLLM's frontend picks (auto), and runs", async () => {
    const cases = [
      [{ type: "json_object" }, "xgrammar", ["json_object"]],
      [
        { type: "json_schema", json_schema: { name: "n", schema: { type: "integer", multipleOf: 5 } } },
        "guidance",
        ["json"],
      ],
    ] as const;
    for (const [response_format, backend, kinds] of cases) {
      const reply = await openai.chat.completions.create({
        model: MODEL,
        messages,
        max_tokens: 2,
        response_format: response_format as never,
      });
      // Without `_backend` the engine (mock and vLLM alike) finishes it with ERROR.
      expect(reply.choices[0]!.finish_reason).toBe("length");
      const add = engine.events.findLast((e) => e.event === "add" && e.requestId === sent.at(-1)!.requestId);
      expect(add?.structuredOutputs, backend).toEqual({ backend, backendWasAuto: true, kinds });
    }
  });

  it("response_format of an unknown type, or json_schema without its schema: 400, param response_format", async () => {
    for (const response_format of [{ type: "yaml" }, { type: "json_schema" }]) {
      const error = await openai.chat.completions
        .create({ model: MODEL, messages, response_format: response_format as never })
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(response_format)).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as { error: { param?: string } }).error.param).toBe("response_format");
    }
  });
});
