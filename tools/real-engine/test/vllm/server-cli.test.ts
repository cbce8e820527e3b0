// `vllm-engine-core serve` as users run it — the built CLI in a child process, bound to the handshake address
// a headless vLLM engine (the REAL engine core, model-free executor) dials — with vLLM's parser flags
// `--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3`, driven by the official
// `openai` client. The engine says a scripted Qwen3 answer (`vllm_xargs.scripted_token_ids`): a `<think>`
// block and a hermes `<tool_call>`, which our server must turn into `message.reasoning` and `tool_calls`.
// `tool_choice: "required"` sends a structured-outputs JSON constraint, which the real engine fails to
// compile in this kit (its xgrammar/guidance are stand-ins): vLLM's answer to an engine-side ERROR is a 500.
// The engine loads its tokenizer here (no --skip-tokenizer-init, as a deployed headless engine): vLLM's
// structured-outputs manager needs it (with --skip-tokenizer-init such a request fails earlier, in
// pre-processing: server.test.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { Tokenizer } from "@vllm-engine-core/text";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  prepareServerModelDir,
  type RealEngine,
  repoRoot,
  startRealEngine,
} from "../../src/index.ts";
import { kit, title } from "./tier.ts";

const MODEL = "tiny";
const CLI = join(repoRoot, "packages/cli/bin/vllm-engine-core.js");

const REASONING = "The user wants the weather, so I call the tool.";
const CALL = { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } };
// Qwen3's answer format: a think block, then a hermes tool call (both tags are Qwen3 special tokens).
const ANSWER = `<think>\n${REASONING}\n</think>\n\n<tool_call>\n${JSON.stringify(CALL)}\n</tool_call>`;
const TOOLS: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather in a city",
      parameters: {
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
        required: ["city"],
      },
    },
  },
];

/** The `vllm_xargs` body field, which the openai client's types do not know. */
const xargs = (value: Record<string, unknown>) => ({ vllm_xargs: value }) as Record<string, unknown>;

interface Cli {
  readonly child: ChildProcess;
  output: string;
}

/** Starts `vllm-engine-core serve` and resolves its base URL once it prints the address it listens on. */
async function startCli(args: string[], timeoutMs: number): Promise<{ cli: Cli; baseUrl: string }> {
  const child = spawn(process.execPath, [CLI, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const cli: Cli = { child, output: "" };
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve printed no address in ${timeoutMs} ms:\n${cli.output}`)),
      timeoutMs,
    );
    const onData = (data: Buffer) => {
      cli.output += data.toString();
      const match = /serving "[^"]+" on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${cli.output}`));
    });
  });
  return { cli, baseUrl: await listening };
}

describe.skipIf(!kit)(
  title("`vllm-engine-core serve` over vLLM's real engine: tool calls and reasoning"),
  () => {
    let engine: RealEngine;
    let cli: Cli | undefined;
    let model: { dir: string; remove(): void } | undefined;
    let openai: OpenAI;
    let tok: Tokenizer;
    let answerIds: number[];

    beforeAll(async () => {
      if (!kit) return;
      const port = await freePort();
      model = prepareServerModelDir();
      engine = startRealEngine({
        kit,
        port,
        modelDir: model.dir,
        skipTokenizerInit: false,
        maxModelLen: 1024,
        executor: { stepMs: 2, logRequests: true },
      });
      tok = Tokenizer.fromDirectory(model.dir);
      answerIds = await tok.encode(ANSWER, { addSpecialTokens: false });
      const started = await startCli(
        [
          "--model",
          model.dir,
          "--served-model-name",
          MODEL,
          "--handshake-address",
          `tcp://127.0.0.1:${port}`,
          "--port",
          "0",
          "--enable-auto-tool-choice",
          "--tool-call-parser",
          "hermes",
          "--reasoning-parser",
          "qwen3",
        ],
        180_000,
      );
      cli = started.cli;
      openai = new OpenAI({ baseURL: `${started.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
    });
    afterAll(async () => {
      if (cli && cli.child.exitCode === null && cli.child.signalCode === null) {
        const exited = once(cli.child, "exit");
        cli.child.kill("SIGTERM");
        await exited;
      }
      await engine?.stop();
      model?.remove();
    });

    it("the answer's markup is Qwen3's special tokens (the engine emits them as single ids)", () => {
      for (const tag of ["<think>", "</think>", "<tool_call>", "</tool_call>"]) {
        expect(answerIds).toContain(tok.tokenToId(tag));
      }
    });

    it("not streamed: message.reasoning, tool_calls, finish_reason tool_calls, no markup in content", async () => {
      const res = await openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        tools: TOOLS,
        ...xargs({ scripted_token_ids: answerIds, scripted_end: "eos" }),
      });
      const choice = res.choices[0];
      // vLLM's reasoning is the text between the tags, newlines kept.
      expect((choice?.message as unknown as { reasoning?: string } | undefined)?.reasoning).toBe(
        `\n${REASONING}\n`,
      );
      expect(choice?.message.tool_calls).toHaveLength(1);
      const call = choice?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{16}$/);
      expect(call.type).toBe("function");
      expect(call.function.name).toBe(CALL.name);
      expect(JSON.parse(call.function.arguments)).toEqual(CALL.arguments);
      expect(choice?.finish_reason).toBe("tool_calls");
      // Only whitespace was left around the call: vLLM's parser makes that null (parser/abstract_parser.py).
      expect(choice?.message.content).toBeNull();
    });

    it("streamed: reasoning deltas, one call's deltas (id, name, then arguments), no markup in any content delta", async () => {
      const stream = await openai.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        tools: TOOLS,
        stream: true,
        ...xargs({ scripted_token_ids: answerIds, scripted_end: "eos" }),
      });
      let reasoning = "";
      let content = "";
      let args = "";
      const names: string[] = [];
      const ids: string[] = [];
      const finishes: string[] = [];
      for await (const chunk of stream) {
        const c = chunk.choices[0];
        if (!c) continue;
        reasoning += (c.delta as { reasoning?: string }).reasoning ?? "";
        content += c.delta.content ?? "";
        for (const call of c.delta.tool_calls ?? []) {
          expect(call.index).toBe(0);
          if (call.id) ids.push(call.id);
          if (call.function?.name) names.push(call.function.name);
          args += call.function?.arguments ?? "";
        }
        if (c.finish_reason) finishes.push(c.finish_reason);
      }
      expect(reasoning).toBe(`\n${REASONING}\n`);
      expect(content).not.toMatch(/<\/?(think|tool_call)>/);
      expect(content.trim()).toBe("");
      expect(ids).toHaveLength(1);
      expect(ids[0]).toMatch(/^chatcmpl-tool-[0-9a-f]{16}$/);
      expect(names).toEqual([CALL.name]);
      expect(JSON.parse(args)).toEqual(CALL.arguments);
      expect(finishes).toEqual(["tool_calls"]);
    });

    it('tool_choice "required": the engine fails to compile the constraint (kit xgrammar); our server answers 500 as vLLM', async () => {
      const body = {
        model: MODEL,
        messages: [{ role: "user" as const, content: "Weather in Paris, required." }],
        tools: TOOLS,
        tool_choice: "required" as const,
        ...xargs({ scripted_token_ids: answerIds, scripted_end: "eos" }),
      };
      const internal = {
        message: "Internal server error",
        type: "InternalServerError",
        param: null,
        code: 500,
      };
      const whole = await openai.chat.completions
        .create({ ...body, ...({ request_id: "required-whole" } as Record<string, unknown>) })
        .catch((e: unknown) => e);
      expect(whole).toBeInstanceOf(OpenAI.InternalServerError);
      expect((whole as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(500);
      expect((whole as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual(internal);
      // What the real engine did with our request: the client named the backend (`_backend`: xgrammar, vLLM's
      // `auto` choice for this JSON schema), the engine's structured-outputs manager built that backend with
      // the engine's tokenizer and compiled the schema in its grammar thread — where the kit's xgrammar, an
      // import-only stand-in, raises. vLLM then finishes the request with ERROR (`_create_grammar`,
      // vllm/v1/structured_output/__init__.py), which vLLM's server answers as a 500.
      const failure = await engine.waitForLog(
        /Failed to compile grammar for request chatcmpl-required-whole-[0-9a-f]{8}/,
        30_000,
      );
      const after = engine.logLines.slice(engine.logLines.indexOf(failure));
      expect(after.find((l) => /Error: /.test(l))).toMatch(
        /RuntimeError: xgrammar\.GrammarCompiler\(\.\.\.\)\.compile_json_schema/,
      );
      expect(engine.logLines.join("\n")).not.toMatch(/Unsupported structured output backend/);

      // Streamed: the role chunk went out before the engine answered; then vLLM's error event, no finish.
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      const streamed = await (async () => {
        const stream = await openai.chat.completions.create({ ...body, stream: true });
        for await (const chunk of stream) chunks.push(chunk);
      })().catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(OpenAI.APIError);
      expect((streamed as InstanceType<typeof OpenAI.APIError>).error).toEqual(internal);
      expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([{ role: "assistant", content: "" }]);
      expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason))).toEqual([null]);
    });
  },
);
