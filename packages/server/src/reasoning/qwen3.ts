// `qwen3`: Qwen3 / Qwen3.5 thinking models, after vLLM's Qwen3 parser engine at the pin
// (vllm/reasoning/qwen3_engine_reasoning_parser.py → vllm/parser/qwen3.py `qwen3_config`): the output starts
// in the reasoning unless `chat_template_kwargs.enable_thinking` is false; `<think>` inside it is dropped,
// `</think>` ends it, and so does `<tool_call>` (a call straight out of the reasoning stays in the content);
// a second `</think>` in the content is dropped. No end marker = everything is reasoning (a cut output).
import { endsReasoning, ThinkStream } from "./think-markers.js";
import type { ReasoningParser, ReasoningSplit, Vocabulary } from "./types.js";
import { markerIds } from "./vocabulary.js";

const MARKERS = { start: "<think>", end: "</think>", implicitEnds: ["<tool_call>"], dropEndInContent: true };

export const qwen3: ReasoningParser = {
  name: "qwen3",
  session(vocab: Vocabulary, kwargs) {
    const { startId, endId } = markerIds(vocab, "qwen3", MARKERS.start, MARKERS.end);
    const thinking = kwargs.enable_thinking !== false;
    return {
      // The engine's `is_reasoning_end`: an empty prompt is "ended" only when thinking is off.
      isReasoningEnd: (ids) => (ids.length === 0 ? !thinking : endsReasoning(ids, startId, endId)),
      extract(output: string): ReasoningSplit {
        const s = new ThinkStream(MARKERS, thinking);
        const a = s.push(output);
        const b = s.flush();
        const reasoning = a.reasoning + b.reasoning;
        const content = a.content + b.content;
        return { reasoning: reasoning === "" ? null : reasoning, content: content === "" ? null : content };
      },
      stream: () => new ThinkStream(MARKERS, thinking),
    };
  },
};
