// `deepseek_r1`: DeepSeek-R1 (`<think>` reasoning `</think>` answer; the model may omit `<think>` because
// the template put it in the prompt), after vLLM's `DeepSeekR1ReasoningParser`
// (vllm/reasoning/deepseek_r1_reasoning_parser.py, `BaseThinkingReasoningParser` in basic_parsers.py).
import { endsReasoning, ThinkStream } from "./think-markers.js";
import type { ReasoningParser, ReasoningSplit, Vocabulary } from "./types.js";
import { markerIds } from "./vocabulary.js";

const MARKERS = { start: "<think>", end: "</think>", implicitEnds: [], dropEndInContent: false };

/** `BaseThinkingReasoningParser.extract_reasoning`: text after `<think>`, up to `</think>`; no end = all reasoning. */
function extract(output: string): ReasoningSplit {
  const s = output.indexOf(MARKERS.start);
  const rest = s === -1 ? output : output.slice(s + MARKERS.start.length);
  const e = rest.indexOf(MARKERS.end);
  if (e === -1) return { reasoning: rest, content: null };
  const content = rest.slice(e + MARKERS.end.length);
  return { reasoning: rest.slice(0, e), content: content === "" ? null : content };
}

export const deepseekR1: ReasoningParser = {
  name: "deepseek_r1",
  session(vocab: Vocabulary) {
    const { startId, endId } = markerIds(vocab, "deepseek_r1", MARKERS.start, MARKERS.end);
    return {
      isReasoningEnd: (ids) => endsReasoning(ids, startId, endId),
      extract,
      // R1's streaming treats text before `</think>` as reasoning whether or not `<think>` was generated.
      stream: () => new ThinkStream(MARKERS, true),
    };
  },
};
