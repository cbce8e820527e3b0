// Tool calling and reasoning end to end: the official `openai` client against the server with
// `--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3`, over the mock engine,
// which generates a scripted token sequence per request (`vllm_xargs.scripted_token_ids`, sent to the
// engine as `extra_args`), so every output is exactly what a Qwen3 model would write.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL, qwen3, type Stack, startStack } from "./helpers.js";

const tok = qwen3();
const EOS = tok.eosTokenId!;
const TOOLS = [
  {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "Weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
  {
    type: "function" as const,
    function: { name: "get_time", parameters: { type: "object", properties: {} } },
  },
];
const MESSAGES = [{ role: "user" as const, content: "Weather in Paris?" }];
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const THOUGHT = "<think>\nThe user wants the weather.\n</think>\n\n";

/** The body fields the scripted mock needs (vLLM's `vllm_xargs` → `SamplingParams.extra_args`). */
async function script(text: string, eos = true): Promise<Record<string, unknown>> {
  const ids = await tok.encode(text, { addSpecialTokens: false });
  return { vllm_xargs: { scripted_token_ids: eos ? [...ids, EOS] : ids } };
}

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
interface Folded {
  content: string;
  reasoning: string;
  calls: { id: string | undefined; type: string | undefined; name: string | undefined; arguments: string }[];
  finish: (string | null)[];
  chunks: Chunk[];
}

async function collect(stream: AsyncIterable<Chunk>): Promise<Folded> {
  const out: Folded = { content: "", reasoning: "", calls: [], finish: [], chunks: [] };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    const choice = chunk.choices[0];
    if (!choice) continue;
    const delta = choice.delta as Chunk["choices"][0]["delta"] & { reasoning?: string };
    out.content += delta.content ?? "";
    out.reasoning += delta.reasoning ?? "";
    for (const tc of delta.tool_calls ?? []) {
      const call = out.calls[tc.index];
      if (call === undefined) {
        // The first delta of a call: index, id, type and name (vLLM's order).
        expect(tc.id).toMatch(/^chatcmpl-tool-[0-9a-f]{16}$/);
        expect(tc.type).toBe("function");
        expect(tc.function?.name).toBeTruthy();
        out.calls[tc.index] = {
          id: tc.id,
          type: tc.type,
          name: tc.function?.name,
          arguments: tc.function?.arguments ?? "",
        };
      } else {
        expect(tc.id ?? undefined).toBeUndefined();
        call.arguments += tc.function?.arguments ?? "";
      }
    }
    if (choice.finish_reason !== null) out.finish.push(choice.finish_reason);
  }
  return out;
}

describe("tool calls and reasoning (hermes + qwen3 parsers, scripted mock engine)", () => {
  let stack: Stack;
  let plain: Stack;
  let openai: OpenAI;
  beforeAll(async () => {
    [stack, plain] = await Promise.all([
      startStack({}, { enableAutoToolChoice: true, toolCallParser: "hermes", reasoningParser: "qwen3" }),
      startStack(),
    ]);
    openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all([stack?.close(), plain?.close()]);
  });

  const create = (body: Record<string, unknown>) =>
    openai.chat.completions.create({
      model: MODEL,
      messages: MESSAGES,
      tools: TOOLS,
      ...body,
    } as never) as Promise<OpenAI.Chat.Completions.ChatCompletion>;
  const createStream = (body: Record<string, unknown>) =>
    openai.chat.completions.create({
      model: MODEL,
      messages: MESSAGES,
      tools: TOOLS,
      stream: true,
      ...body,
    } as never) as unknown as Promise<AsyncIterable<Chunk>>;

  it("auto, non-streaming: reasoning, a tool call with vLLM's id and arguments, finish tool_calls", async () => {
    const ids = await tok.encode(THOUGHT + CALL, { addSpecialTokens: false });
    const res = await create(await script(THOUGHT + CALL));
    const choice = res.choices[0]!;
    const message = choice.message as typeof choice.message & { reasoning: string | null };
    expect(choice.finish_reason).toBe("tool_calls");
    expect(message.reasoning).toBe("\nThe user wants the weather.\n");
    expect(message.content).toBeNull();
    expect(message.tool_calls).toHaveLength(1);
    const call = message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{16}$/);
    expect(call.type).toBe("function");
    expect(call.function).toEqual({ name: "get_weather", arguments: '{"city": "Paris"}' });
    // vLLM at the pin counts every generated token (no completion_tokens_details for chat).
    expect(res.usage?.completion_tokens).toBe(ids.length + 1);
  });

  it("auto, streaming: reasoning deltas, then the call's id/type/name, then argument fragments; no markup in content", async () => {
    const r = await collect(
      await createStream({ ...(await script(THOUGHT + CALL)), stream_options: { include_usage: true } }),
    );
    expect(r.chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(r.reasoning).toBe("\nThe user wants the weather.\n");
    expect(r.content.trim()).toBe(""); // only the blank line between </think> and <tool_call>
    expect(r.content).not.toContain("<");
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0]!.name).toBe("get_weather");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ city: "Paris" });
    expect(r.finish).toEqual(["tool_calls"]);
    const argumentDeltas = r.chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments);
    expect(argumentDeltas.length).toBeGreaterThan(1); // fragments as the model writes them
    expect(r.chunks.at(-1)!.choices).toEqual([]);
    expect(r.chunks.at(-1)!.usage?.completion_tokens).toBe((await tok.encode(THOUGHT + CALL)).length + 1);
  });

  it("content before a call and two parallel calls; parallel_tool_calls: false keeps the first only", async () => {
    const text = `Checking both.${CALL}\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>`;
    const body = { ...(await script(text)), chat_template_kwargs: { enable_thinking: false } };
    const res = await create(body);
    expect(res.choices[0]!.message.content).toBe("Checking both.");
    expect(res.choices[0]!.message.tool_calls?.map((c) => (c as { function: unknown }).function)).toEqual([
      { name: "get_weather", arguments: '{"city": "Paris"}' },
      { name: "get_time", arguments: "{}" },
    ]);
    const one = await create({ ...body, parallel_tool_calls: false });
    expect(one.choices[0]!.message.tool_calls).toHaveLength(1);
    const streamed = await collect(await createStream({ ...body, parallel_tool_calls: false }));
    expect(streamed.calls.map((c) => c.name)).toEqual(["get_weather"]);
    expect(streamed.content).toBe("Checking both.");
  });

  it("enable_thinking=false: the prompt closes the think block, so the answer is content", async () => {
    const body = { ...(await script("Just text.")), chat_template_kwargs: { enable_thinking: false } };
    const res = await create(body);
    const message = res.choices[0]!.message as unknown as {
      content: string | null;
      reasoning: string | null;
    };
    expect(message).toMatchObject({ content: "Just text.", reasoning: null });
    expect(res.choices[0]!.finish_reason).toBe("stop");
    const r = await collect(await createStream(body));
    expect([r.content, r.reasoning, r.finish]).toEqual(["Just text.", "", ["stop"]]);
  });

  it("include_reasoning: false drops the reasoning, whole and streamed", async () => {
    const body = { ...(await script(`${THOUGHT}Sunny.`)), include_reasoning: false };
    const res = await create(body);
    // Qwen3's parser keeps the blank line after </think> (vLLM strips content only when tools were called).
    expect(res.choices[0]!.message).toMatchObject({ content: "\n\nSunny.", reasoning: null });
    const r = await collect(await createStream(body));
    expect([r.reasoning, r.content]).toEqual(["", "\n\nSunny."]);
  });

  it("max_tokens inside <think>: the stream ends cleanly with reasoning only, finish length", async () => {
    const body = { ...(await script("<think>\nA long thought that is cut here", false)), max_tokens: 5 };
    const r = await collect(await createStream(body));
    const expected = tok.decode((await tok.encode("<think>\nA long thought that is cut here")).slice(0, 5), {
      skipSpecialTokens: false,
    });
    expect(r.reasoning).toBe(expected.replace("<think>", ""));
    expect(r.content).toBe("");
    expect(r.finish).toEqual(["length"]);
    const res = await create(body);
    expect(res.choices[0]!.message).toMatchObject({
      content: null,
      reasoning: expected.replace("<think>", ""),
    });
  });

  it("tool_choice required: the JSON array output becomes tool calls, finish tool_calls (whole and streamed)", async () => {
    const text =
      '[{"name": "get_weather", "parameters": {"city": "Paris"}}, {"name": "get_time", "parameters": {}}]';
    const body = {
      ...(await script(text)),
      tool_choice: "required",
      chat_template_kwargs: { enable_thinking: false },
    };
    const res = await create(body);
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(res.choices[0]!.message.content).toBe("");
    expect(res.choices[0]!.message.tool_calls?.map((c) => (c as { function: unknown }).function)).toEqual([
      { name: "get_weather", arguments: '{"city": "Paris"}' },
      { name: "get_time", arguments: "{}" },
    ]);
    const r = await collect(await createStream(body));
    expect(r.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_time", {}],
    ]);
    expect(r.finish).toEqual(["tool_calls"]);
    expect(r.content).toBe("");
  });

  it("a named tool_choice: the arguments object output is the call, finish stop (OpenAI's rule)", async () => {
    const body = {
      ...(await script('{"city": "Paris"}')),
      tool_choice: { type: "function", function: { name: "get_weather" } },
      chat_template_kwargs: { enable_thinking: false },
    };
    const res = await create(body);
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.choices[0]!.message.content).toBe("");
    expect(res.choices[0]!.message.tool_calls?.map((c) => (c as { function: unknown }).function)).toEqual([
      { name: "get_weather", arguments: '{"city": "Paris"}' },
    ]);
    const r = await collect(await createStream(body));
    expect(r.calls.map((c) => [c.name, c.arguments])).toEqual([["get_weather", '{"city": "Paris"}']]);
    expect(r.finish).toEqual(["stop"]);
  });

  it("tool_choice none: tools still reach the template, the output stays content", async () => {
    const body = {
      ...(await script(CALL)),
      tool_choice: "none",
      chat_template_kwargs: { enable_thinking: false },
    };
    const res = await create(body);
    expect(res.choices[0]!.message.content).toBe(CALL);
    expect(res.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(res.choices[0]!.finish_reason).toBe("stop");
  });

  it("assistant tool_calls and tool results render as vLLM renders them (arguments parsed back to objects)", async () => {
    const history = [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "Sunny, 21 C" },
    ];
    const res = await openai.chat.completions.create({
      model: MODEL,
      messages: history,
      tools: TOOLS,
      ...(await script("It is sunny.")),
    } as never);
    // vLLM renders absent content as "" and the arguments as an object.
    const asStrings = JSON.parse(JSON.stringify(history));
    asStrings[1].content = "";
    const asObjects = JSON.parse(JSON.stringify(asStrings));
    asObjects[1].tool_calls[0].function.arguments = { city: "Paris" };
    // Unset fields reach the template as None, in the model's field order (name, description, parameters).
    const tools = TOOLS.map((t) => ({
      type: t.type,
      function: {
        name: t.function.name,
        description: t.function.description ?? null,
        parameters: t.function.parameters,
      },
    }));
    const options = { addGenerationPrompt: true, tools };
    const expected = await tok.encodeChat(asObjects, options);
    const stringArgs = await tok.encodeChat(asStrings, options);
    expect(expected.promptTokenIds.length).not.toBe(stringArgs.promptTokenIds.length); // the test can tell
    expect((res as OpenAI.Chat.Completions.ChatCompletion).usage?.prompt_tokens).toBe(
      expected.promptTokenIds.length,
    );
  });

  it("request checks: vLLM's messages and params", async () => {
    const post = (url: string, body: Record<string, unknown>) =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: MESSAGES, ...body }),
      }).then(async (r) => ({
        status: r.status,
        error: ((await r.json()) as { error: Record<string, unknown> }).error,
      }));
    expect(await post(plain.baseUrl, { tools: TOOLS })).toMatchObject({
      status: 400,
      error: {
        message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      },
    });
    expect(await post(plain.baseUrl, { tools: TOOLS, tool_choice: "required" })).toMatchObject({
      status: 400,
      error: { message: 'tool_choice="required" requires --tool-call-parser to be set' },
    });
    expect(await post(plain.baseUrl, { tools: TOOLS, tool_choice: "none", max_tokens: 1 })).toMatchObject({
      status: 200,
    });
    expect(await post(stack.baseUrl, { tool_choice: "auto" })).toMatchObject({
      status: 400,
      error: { message: "When using `tool_choice`, `tools` must be set.", param: "tool_choice" },
    });
    expect(await post(stack.baseUrl, { tools: [] })).toMatchObject({
      status: 400,
      error: { param: "tools" },
    });
    expect(await post(stack.baseUrl, { tools: TOOLS, tool_choice: "sometimes" })).toMatchObject({
      status: 400,
      error: {
        message:
          'Invalid value for `tool_choice`: sometimes! Only named tools, "none", "auto" or "required" are supported.',
      },
    });
    expect(
      await post(stack.baseUrl, {
        tools: TOOLS,
        tool_choice: { type: "function", function: { name: "nope" } },
      }),
    ).toMatchObject({
      status: 400,
      error: { message: "The tool specified in `tool_choice` does not match any of the specified `tools`" },
    });
  });
});
