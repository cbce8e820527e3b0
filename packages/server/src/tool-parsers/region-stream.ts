// A streaming tool-call parser for formats where everything from a start marker on is tool calls (and
// text before it is content), built on a format's whole-region parse: each delta re-parses the region
// from the marker on and sends what is new, a call's id/type/name once its name is complete, then its
// arguments as they grow. Formats whose arguments are the model's own text stream that text; formats that
// re-serialize (XML parameters → JSON) send only the prefix two successive parses agree on, as vLLM's
// JSON parsers do (`find_common_prefix`), and the rest once the call is complete.
import { commonPrefix } from "./json-text.js";
import { makeToolCallId } from "./text.js";
import type { DeltaMessage, DeltaToolCall, ToolCallStream } from "./types.js";

export interface PartialCall {
  /** Undefined until the whole name is known. */
  name: string | undefined;
  /** The arguments text so far (final once `complete`). */
  arguments: string;
  complete: boolean;
}

export interface RegionFormat {
  /** Where the tool-call region starts (the marker's index), or -1. */
  findStart(text: string): number;
  /** How many characters at the end of the content may still become the start of the region. */
  holdBack(text: string): number;
  /** The calls in the region so far; `final` when the output ended. */
  parse(region: string, final: boolean): PartialCall[];
  /** Arguments are re-serialized, not the model's text: send only what two parses agree on. */
  readonly reserialized: boolean;
  /** A new id for a call (default vLLM's `make_tool_call_id()`). */
  makeId?(): string;
}

export class RegionStream implements ToolCallStream {
  #text = "";
  #contentEnd = 0;
  #regionStart = -1;
  #names: (string | undefined)[] = [];
  #sent: string[] = [];
  #previous: string[] = [];
  #last: PartialCall | undefined;

  constructor(readonly format: RegionFormat) {}

  push(delta: string): DeltaMessage | null {
    this.#text += delta;
    return this.#step(false);
  }

  flush(): DeltaMessage | null {
    if (this.#regionStart === -1) {
      const rest = this.#text.slice(this.#contentEnd);
      this.#contentEnd = this.#text.length;
      return rest === "" ? null : { content: rest };
    }
    return this.#step(true);
  }

  #step(final: boolean): DeltaMessage | null {
    const text = this.#text;
    let content: string | undefined;
    if (this.#regionStart === -1) {
      const start = this.format.findStart(text);
      const hold = start === -1 ? this.format.holdBack(text) : 0;
      const sendable = start === -1 ? text.length - hold : start;
      if (sendable > this.#contentEnd) {
        content = text.slice(this.#contentEnd, sendable);
        this.#contentEnd = sendable;
      }
      if (start === -1) return content === undefined ? null : { content };
      this.#regionStart = start;
    }
    const calls = this.format.parse(text.slice(this.#regionStart), final);
    const out: DeltaToolCall[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as PartialCall;
      if (this.#names[i] === undefined) {
        if (call.name === undefined) break; // later calls wait for this one's name
        this.#names[i] = call.name;
        this.#sent[i] = "";
        this.#previous[i] = "";
        out.push({
          index: i,
          type: "function",
          id: this.format.makeId?.() ?? makeToolCallId(),
          function: { name: call.name },
        });
      }
      const sent = this.#sent[i] as string;
      // Re-serialized arguments: only a change tells which prefix is stable (vLLM sends nothing while the
      // parse is unchanged: `cur_args_json != prev_args_json`).
      const previous = this.#previous[i] as string;
      const sendable =
        call.complete || !this.format.reserialized
          ? call.arguments
          : previous !== call.arguments
            ? commonPrefix(previous, call.arguments)
            : "";
      this.#previous[i] = call.arguments;
      if (sendable.length > sent.length && sendable.startsWith(sent)) {
        out.push({ index: i, function: { arguments: sendable.slice(sent.length) } });
        this.#sent[i] = sendable;
      }
      this.#last = call;
    }
    if (content === undefined && out.length === 0) return null;
    return { ...(content === undefined ? {} : { content }), tool_calls: out };
  }

  remainingArguments(): string {
    const last = this.#last;
    const sent = this.#sent[this.#sent.length - 1] ?? "";
    if (last === undefined || !last.arguments.startsWith(sent)) return "";
    return last.arguments.slice(sent.length);
  }
}
