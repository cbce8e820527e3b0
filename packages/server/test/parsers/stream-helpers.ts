// Drives a streaming parser the way the server does: with the text deltas the detokenizer produces (one
// token at a time, n tokens at a time), or with the text cut at every character position.
import type { Tokenizer } from "@vllm-engine-core/text";
import { expect } from "vitest";
import type { DeltaMessage, ToolCallStream } from "../../src/tool-parsers/index.js";

/** The text each group of `interval` tokens adds, as an incremental detokenizer emits it. */
export async function tokenDeltas(tok: Tokenizer, text: string, interval = 1): Promise<string[]> {
  const ids = await tok.encode(text, { addSpecialTokens: false });
  const out: string[] = [];
  let previous = "";
  for (let i = interval; i < ids.length + interval; i += interval) {
    const current = tok.decode(ids.slice(0, Math.min(i, ids.length)), { skipSpecialTokens: false });
    // A character still incomplete (U+FFFD at the end) waits for the next token, as the detokenizer does.
    if (current.endsWith("\uFFFD") && i < ids.length) continue;
    out.push(current.slice(previous.length));
    previous = current;
  }
  expect(out.join("")).toBe(text);
  return out;
}

/** Every two-piece cut of the text, plus one delta per character. */
export function characterSplits(text: string): string[][] {
  const splits: string[][] = [];
  for (let i = 1; i < text.length; i++) splits.push([text.slice(0, i), text.slice(i)]);
  splits.push([...text]);
  return splits;
}

export interface StreamedCall {
  id: string | undefined;
  type: string | undefined;
  name: string | undefined;
  arguments: string;
  /** Deltas seen for this call, in order: the first must carry the id and name. */
  deltas: number;
}

export interface Streamed {
  content: string;
  reasoning: string;
  calls: StreamedCall[];
  messages: DeltaMessage[];
}

/** Folds delta messages as an OpenAI client does, checking vLLM's order: id, type and name come first. */
export function fold(messages: readonly (DeltaMessage | null)[]): Streamed {
  const out: Streamed = { content: "", reasoning: "", calls: [], messages: [] };
  for (const m of messages) {
    if (m === null) continue;
    out.messages.push(m);
    out.content += m.content ?? "";
    out.reasoning += m.reasoning ?? "";
    for (const tc of m.tool_calls ?? []) {
      let call = out.calls[tc.index];
      if (call === undefined) {
        expect(tc.index).toBe(out.calls.length); // calls start in order
        expect(tc.id).toMatch(/^(chatcmpl-tool-[0-9a-f]{16}|[A-Za-z0-9]{9})$/); // vLLM's, or Mistral's
        expect(tc.type).toBe("function");
        expect(tc.function?.name).toBeTruthy();
        call = { id: tc.id, type: tc.type, name: tc.function?.name, arguments: "", deltas: 0 };
        out.calls[tc.index] = call;
      } else {
        expect(tc.id).toBeUndefined();
      }
      call.arguments += tc.function?.arguments ?? "";
      call.deltas++;
    }
  }
  return out;
}

/** Runs one stream over the deltas and finishes it as the server does on the last one. */
export function runToolStream(stream: ToolCallStream, deltas: readonly string[]): Streamed {
  const messages = deltas.map((d) => stream.push(d));
  messages.push(stream.flush?.() ?? null);
  const folded = fold(messages);
  const last = folded.calls.at(-1);
  if (last) last.arguments += stream.remainingArguments();
  return folded;
}
