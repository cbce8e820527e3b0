// The `<think>…</think>` state machine both built-in reasoning parsers share, over text deltas of any size
// (one token, several, or single characters): a suffix that could begin a marker is held back until the
// next delta decides it, so a marker split across deltas never leaks into either side.
import { partialTagOverlap } from "../tool-parsers/text.js";
import type { ReasoningDelta, ReasoningStream } from "./types.js";

export interface ThinkMarkers {
  start: string;
  end: string;
  /** Markers that end the reasoning implicitly and stay in the content (Qwen3: `<tool_call>`). */
  implicitEnds: readonly string[];
  /** A second end marker after the reasoning closed is dropped (Qwen3's engine absorbs it). */
  dropEndInContent: boolean;
}

export class ThinkStream implements ReasoningStream {
  #reasoning: boolean;
  #held = "";
  readonly #all: readonly string[];
  /** The markers' first characters: a delta without any of them cannot hold or begin a marker. */
  readonly #firsts: readonly string[];
  constructor(
    readonly markers: ThinkMarkers,
    startInReasoning: boolean,
  ) {
    this.#reasoning = startInReasoning;
    this.#all = [markers.start, markers.end, ...markers.implicitEnds];
    this.#firsts = [...new Set(this.#all.map((k) => k[0] as string))];
  }

  #markerFree(text: string): boolean {
    for (const c of this.#firsts) if (text.includes(c)) return false;
    return true;
  }

  get inReasoning(): boolean {
    return this.#reasoning;
  }

  push(delta: string): ReasoningDelta {
    let text = this.#held + delta;
    this.#held = "";
    // The common case, once per token: nothing that could be a marker.
    if (this.#markerFree(text)) {
      return this.#reasoning
        ? { reasoning: text, content: "", ended: false }
        : { reasoning: "", content: text, ended: false };
    }
    let reasoning = "";
    let content = "";
    let ended = false;
    const m = this.markers;
    while (this.#reasoning) {
      // The earliest marker in the text decides.
      let at = -1;
      let which = "";
      for (const marker of this.#all) {
        const i = text.indexOf(marker);
        if (i !== -1 && (at === -1 || i < at)) {
          at = i;
          which = marker;
        }
      }
      if (at === -1) {
        let hold = 0;
        for (const k of this.#all) hold = Math.max(hold, partialTagOverlap(text, k));
        reasoning += text.slice(0, text.length - hold);
        this.#held = text.slice(text.length - hold);
        return { reasoning, content, ended };
      }
      reasoning += text.slice(0, at);
      if (which === m.start) {
        text = text.slice(at + which.length); // a start marker inside the reasoning is dropped
        continue;
      }
      this.#reasoning = false;
      ended = true;
      text = which === m.end ? text.slice(at + which.length) : text.slice(at);
    }
    if (m.dropEndInContent) {
      if (text.includes(m.end)) text = text.split(m.end).join("");
      const hold = partialTagOverlap(text, m.end);
      this.#held = text.slice(text.length - hold);
      text = text.slice(0, text.length - hold);
    }
    content += text;
    return { reasoning, content, ended };
  }

  flush(): ReasoningDelta {
    const held = this.#held;
    this.#held = "";
    return this.#reasoning
      ? { reasoning: held, content: "", ended: false }
      : { reasoning: "", content: held, ended: false };
  }
}

/** vLLM's `is_reasoning_end`: scanning back, an end marker before any start marker. */
export function endsReasoning(tokenIds: readonly number[], startId: number, endId: number): boolean {
  for (let i = tokenIds.length - 1; i >= 0; i--) {
    if (tokenIds[i] === endId) return true;
    if (tokenIds[i] === startId) return false;
  }
  return false;
}
