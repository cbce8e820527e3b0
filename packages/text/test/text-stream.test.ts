// The text stream over the real client, with the mock engine in a child process on real ZeroMQ sockets.
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EngineCoreClient, FinishReason } from "@vllm-engine-core/client";
import { expectedTokens, type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TextDelta, textStream, withModelStopTokens } from "../src/index.js";
import { qwen3 } from "./helpers.js";

const tok = qwen3();

async function connect(
  echoPrompt: boolean,
): Promise<{ client: EngineCoreClient; engine: MockEngineProcess }> {
  const handshakeAddress = `ipc://${join(tmpdir(), `vec-text-${randomUUID().slice(0, 8)}.sock`)}`;
  const engine = await startMockEngine({ handshakeAddress, stepMs: 2, echoPrompt });
  try {
    const client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
    });
    return { client, engine };
  } catch (error) {
    await engine.stop();
    throw error;
  }
}

async function collect(stream: AsyncIterable<TextDelta>): Promise<{ text: string; deltas: TextDelta[] }> {
  const deltas: TextDelta[] = [];
  for await (const d of stream) deltas.push(d);
  return { text: deltas.map((d) => d.text).join(""), deltas };
}

describe("textStream over EngineCoreClient + mock engine (--echo-prompt)", () => {
  let client: EngineCoreClient;
  let engine: MockEngineProcess;
  beforeAll(async () => {
    ({ client, engine } = await connect(true));
  });
  afterAll(async () => {
    await client?.shutdown();
    await engine?.stop();
  });

  it("streams exactly the text of the echoed prompt, multi-byte characters included", async () => {
    const text = "The quick brown fox — 你好，世界 😀👍🏽 café.";
    const prompt = await tok.encode(text);
    const request = {
      requestId: "echo-1",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: prompt.length },
    };
    const { text: streamed, deltas } = await collect(textStream(tok, request, await client.call(request)));
    expect(streamed).toBe(text);
    expect(deltas.at(-1)!.finishReason).toBe(FinishReason.LENGTH);
    expect(deltas.flatMap((d) => d.tokenIds)).toEqual(prompt);
  });

  it("a stream interval merges deltas (first at once, then ≥ N tokens) and loses no text, token or output", async () => {
    const text =
      "The quick brown fox — 你好，世界 😀👍🏽 café, and then a stop word: STOP and more after it.";
    const prompt = await tok.encode(text);
    const request = {
      requestId: "interval-1",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: 100_000, stop: ["STOP"] },
    };
    const { text: merged, deltas } = await collect(
      textStream(tok, request, await client.call(request), { streamInterval: 4 }),
    );
    expect(merged).toBe(text.slice(0, text.indexOf("STOP")));
    const tokens = deltas.map((d) => d.tokenIds.length);
    for (const n of tokens.slice(1, -1)) expect(n).toBeGreaterThanOrEqual(4);
    // The first delta goes out at once (one engine output), and no delta is held past the interval: the
    // outputs before its last one hold fewer than 4 tokens.
    expect(deltas[0]!.outputs).toBeUndefined();
    for (const d of deltas.slice(0, -1)) {
      const before = (d.outputs ?? [d.output]).slice(0, -1);
      expect(before.reduce((sum, o) => sum + o.newTokenIds.length, 0)).toBeLessThan(4);
    }
    // Merged deltas list their engine outputs, whose tokens are the delta's, in order.
    for (const d of deltas) {
      const outputs = d.outputs ?? [d.output];
      expect(outputs.flatMap((o) => o.newTokenIds)).toEqual(d.tokenIds);
      expect(outputs.at(-1)).toBe(d.output);
    }
    expect(deltas.filter((d) => d.outputs !== undefined).length).toBeGreaterThan(0);
    // A stop string inside a merged run still finishes the request at once and aborts it on the engine.
    const last = deltas.at(-1)!;
    expect([last.finishReason, last.stopReason, last.abortEngine]).toEqual([FinishReason.STOP, "STOP", true]);
    await engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds as string[] | undefined)?.includes("interval-1") === true,
    );
    // A bad interval is refused, and the request already started is not left running.
    let returned = false;
    const started = {
      requestId: "x",
      return: async () => {
        returned = true;
        return { done: true };
      },
    };
    expect(() => textStream(tok, request, started as never, { streamInterval: 0 })).toThrow(
      /Invalid text option `streamInterval`: must be an integer of at least 1/,
    );
    expect(returned).toBe(true);
  });

  it("finishes on a stop string with STOP and the string, and aborts the request on the engine", async () => {
    const prompt = await tok.encode("alpha beta gamma STOP delta epsilon");
    const request = {
      requestId: "stop-1",
      promptTokenIds: prompt,
      // Without the abort the engine would run for 100k tokens.
      samplingParams: { maxTokens: 100_000, stop: ["STOP"] },
    };
    const { text, deltas } = await collect(textStream(tok, request, await client.call(request)));
    expect(text).toBe("alpha beta gamma ");
    const last = deltas.at(-1)!;
    expect(last.finishReason).toBe(FinishReason.STOP);
    expect(last.stopReason).toBe("STOP");
    expect(last.abortEngine).toBe(true);
    const abort = await engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds as string[] | undefined)?.includes("stop-1") === true,
    );
    expect(abort.removed).toEqual(["stop-1"]);
    expect(engine.events.some((e) => e.event === "finished" && e.requestId === "stop-1")).toBe(false);
  });

  it("keeps the stop string with include_stop_str_in_output", async () => {
    const prompt = await tok.encode("one two three");
    const request = {
      requestId: "stop-2",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: 100_000, stop: [" two"], includeStopStrInOutput: true },
    };
    const { text } = await collect(textStream(tok, request, await client.call(request)));
    expect(text).toBe("one two");
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds as string[]).includes("stop-2"));
  });

  it("stops on the model's EOS (engine side) and leaves it out of the text", async () => {
    const { promptTokenIds } = await tok.encodeChat([{ role: "user", content: "Hi there" }], {
      addGenerationPrompt: true,
    });
    const samplingParams = withModelStopTokens({ maxTokens: 1000 }, tok);
    const request = { requestId: "eos-1", promptTokenIds, samplingParams };
    const { text, deltas } = await collect(textStream(tok, request, await client.call(request)));
    // The echo reaches <|im_end|> (eos 151645) after "<|im_start|>user\nHi there".
    expect(text).toBe("user\nHi there");
    const last = deltas.at(-1)!;
    expect(last.finishReason).toBe(FinishReason.STOP);
    expect(last.stopReason).toBeNull();
    expect(last.abortEngine).toBe(false);
    expect(last.tokenIds.at(-1)).toBe(151_645);
  });

  it("leaving the text stream early aborts the request on the engine", async () => {
    const prompt = await tok.encode("a b c d e f g h");
    const request = { requestId: "leave-1", promptTokenIds: prompt, samplingParams: { maxTokens: 100_000 } };
    for await (const delta of textStream(tok, request, await client.call(request))) {
      if (delta.text.includes("c")) break;
    }
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds as string[]).includes("leave-1"));
  });
});

describe("textStream with the mock engine's deterministic tokens", () => {
  let client: EngineCoreClient;
  let engine: MockEngineProcess;
  beforeAll(async () => {
    ({ client, engine } = await connect(false));
  });
  afterAll(async () => {
    await client?.shutdown();
    await engine?.stop();
  });

  it("streams the decode of expectedTokens, and a stop string picked from it cuts the text there", async () => {
    const prompt = [9707, 1879, 0];
    const tokens = expectedTokens("det-1", prompt, 64);
    const full = tok.decode(tokens, { skipSpecialTokens: true });
    const request = { requestId: "det-1", promptTokenIds: prompt, samplingParams: { maxTokens: 64 } };
    const { text } = await collect(textStream(tok, request, await client.call(request)));
    expect(text).toBe(full);

    const stop = full.slice(40, 46);
    const cut = full.indexOf(stop);
    const request2 = {
      requestId: "det-1",
      promptTokenIds: prompt,
      samplingParams: { maxTokens: 64, stop: [stop] },
    };
    const second = await collect(textStream(tok, request2, await client.call(request2)));
    expect(second.text).toBe(full.slice(0, cut));
    expect(second.deltas.at(-1)!.stopReason).toBe(stop);
  });
});
