import { describe, expect, it } from "vitest";
import { EchoTokenStream, ScriptedTokenStream } from "../src/tokens.js";
import { scriptOf } from "../src/wire.js";

describe("scripted tokens (extra_args.scripted_token_ids)", () => {
  it("reads the script from extra_args, bigint ids included; a malformed one is no script", () => {
    expect(scriptOf({ scripted_token_ids: [1n, 2, 3n] })).toEqual({ tokenIds: [1, 2, 3], end: "continue" });
    expect(scriptOf({ scripted_token_ids: [5], scripted_end: "eos" })).toEqual({ tokenIds: [5], end: "eos" });
    expect(scriptOf({ scripted_token_ids: ["a"] })).toBeNull();
    expect(scriptOf({ other: 1 })).toBeNull();
    expect(scriptOf(null)).toBeNull();
    // The engine's decoder gives extra_args as a Map.
    expect(scriptOf(new Map<string, unknown>([["scripted_token_ids", [4n]]]))).toEqual({
      tokenIds: [4],
      end: "continue",
    });
  });

  it("emits the script, then EOS (end eos) or the mode's usual tokens (continue)", () => {
    const eos = ScriptedTokenStream.around({ tokenIds: [7, 8], end: "eos" }, 99, new EchoTokenStream([1, 2]));
    expect([eos.next(), eos.next(), eos.next(), eos.next()]).toEqual([7, 8, 99, 99]);
    const cont = ScriptedTokenStream.around(
      { tokenIds: [7], end: "continue" },
      99,
      new EchoTokenStream([1, 2]),
    );
    expect([cont.next(), cont.next(), cont.next()]).toEqual([7, 1, 2]);
    const none = ScriptedTokenStream.around(null, 99, new EchoTokenStream([4]));
    expect(none.next()).toBe(4);
  });
});
