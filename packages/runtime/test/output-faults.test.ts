// The rule that decides what an undecodable engine output message fails (src/runtime-thread/output-faults.ts), fed
// with the ProtocolError the transport gets from the full decode of the same frames. The end-to-end cases
// over real sockets are in tools/reliability/test/protocol-errors.test.ts; this covers the attribution on
// output sockets several engines share and the field classification.
import {
  decodeOutputMessage,
  encodeEngineCoreOutputs,
  encodeValue,
  ProtocolError,
} from "@vllm-engine-core/protocol";
import { describe, expect, it } from "vitest";
import { OutputFaultJudge, REPEATED_FAULTS } from "../src/runtime-thread/output-faults.ts";

/** The error decodeOutputMessage raises for `frames` (it must raise one). */
function decodeError(frames: Uint8Array[]): ProtocolError {
  try {
    decodeOutputMessage(frames);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error("the frames decoded");
}

/** EngineCoreOutputs as a raw array, so any field can hold any value. */
const raw = (
  engineIndex: unknown,
  outputs: unknown[],
  rest: unknown[] = [null, 0.5, null, null, null, null],
) => [encodeValue([engineIndex, outputs, ...rest])];

const badTokens = (engineIndex: number) =>
  raw(engineIndex, [
    ["a", [1]],
    ["b", "not tokens"],
  ]);

describe("OutputFaultJudge", () => {
  it("a fault inside an output fails the requests the message names, outputs and finished ids", () => {
    const frames = raw(
      0,
      [
        ["a", [1]],
        ["b", "x"],
      ],
      [null, 0.5, null, ["c"], null, null],
    );
    const verdict = new OutputFaultJudge().judge(decodeError(frames), frames, [0]);
    expect(verdict).toMatchObject({ kind: "requests", engineIndex: 0, requestIds: ["a", "b", "c"] });
    expect(verdict.kind === "requests" && verdict.error).toMatchObject({
      field: "EngineCoreOutputs.outputs[1].new_token_ids",
      engineIndex: 0,
      outcome: "requests-failed",
    });
  });

  it("a fault in a utility reply's result fails that call; in its call id, the engine", () => {
    const result = raw(0, [], [null, 0.5, [7, null, "not a UtilityResult"], null, null, null]);
    expect(new OutputFaultJudge().judge(decodeError(result), result, [0])).toMatchObject({
      kind: "utility",
      engineIndex: 0,
      callId: 7n,
      error: { outcome: "utility-call-failed", field: "EngineCoreOutputs.utility_output.result" },
    });
    const callId = raw(0, [], [null, 0.5, ["seven", null, null], null, null, null]);
    expect(new OutputFaultJudge().judge(decodeError(callId), callId, [0])).toMatchObject({
      kind: "engines",
      errors: [{ engineIndex: 0, outcome: "engine-dead" }],
    });
  });

  it("message-level faults, broken msgpack and mixed shapes make the engine dead", () => {
    const cases = [
      raw(0, [["a", [1]]], [{ num_running_reqs: "many" }, 0.5, null, null, null, null]), // scheduler_stats
      raw(0, [["a", [1]]], [null, "noon", null, null, null, null]), // timestamp
      raw(0, [["a", [1]]], [null, 0.5, null, [1], null, null]), // finished_requests
      [Uint8Array.of(0xc1)],
      [new TextEncoder().encode("ENGINE_CORE_DEAD"), Uint8Array.of(1)],
      encodeEngineCoreOutputs({
        outputs: [{ requestId: "a", newTokenIds: [1] }],
        utilityOutput: { callId: 1n, failureMessage: null, result: null },
      }),
    ];
    for (const frames of cases) {
      const verdict = new OutputFaultJudge().judge(decodeError(frames), frames, [3]);
      expect(verdict).toMatchObject({
        kind: "engines",
        errors: [{ engineIndex: 3, outcome: "engine-dead" }],
      });
    }
  });

  it(`the ${REPEATED_FAULTS}th undecodable message from one engine within the window makes it dead`, () => {
    const judge = new OutputFaultJudge();
    const frames = badTokens(0);
    const error = decodeError(frames);
    for (let i = 1; i < REPEATED_FAULTS; i++) expect(judge.judge(error, frames, [0]).kind).toBe("requests");
    // Another engine's count is its own.
    expect(judge.judge(decodeError(badTokens(1)), badTokens(1), [1]).kind).toBe("requests");
    const verdict = judge.judge(error, frames, [0]);
    expect(verdict).toMatchObject({ kind: "engines", errors: [{ engineIndex: 0 }] });
    expect(verdict.kind === "engines" && verdict.errors[0]!.detail).toContain(
      `${REPEATED_FAULTS} undecodable messages from this engine within 10 s`,
    );
  });

  it("on a shared output socket the message's engine_index names the sender if it is one of them", () => {
    const frames = badTokens(1);
    expect(new OutputFaultJudge().judge(decodeError(frames), frames, [0, 1, 2])).toMatchObject({
      kind: "requests",
      engineIndex: 1,
    });
    // Unreadable, or not an engine of that socket: nothing says who sent it, every live engine on it fails.
    for (const unknown of [raw("one", [["a", "x"]]), badTokens(7), [Uint8Array.of(0xc1)]]) {
      const verdict = new OutputFaultJudge().judge(decodeError(unknown), unknown, [0, 2]);
      expect(verdict).toMatchObject({ kind: "engines", errors: [{ engineIndex: 0 }, { engineIndex: 2 }] });
    }
  });

  it("the only engine on its socket is the sender, whatever engine_index says; no live sender, nothing to fail", () => {
    const frames = badTokens(5);
    expect(new OutputFaultJudge().judge(decodeError(frames), frames, [2])).toMatchObject({
      kind: "requests",
      engineIndex: 2,
    });
    expect(new OutputFaultJudge().judge(decodeError(frames), frames, [])).toEqual({
      kind: "engines",
      errors: [],
    });
  });
});
