// decodeOutputMessageKnowing: the owner thread's decode of a routed output message. It must give exactly what
// decodeOutputMessage gives — values and errors — whatever the caller says it knows, on every frame shape.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EngineCoreOutputsInit,
  encodeEngineCoreOutputs,
  encodeValue,
  FinishReason,
  type KnownRequest,
  type OutputMessage,
} from "../src/index.js";
import { EngineCoreOutputsCodec } from "../src/structs/output.js";
import { arbitraryFor } from "./helpers/arbitraries.js";
import { decodeOutputMessage, decodeOutputMessageKnowing } from "./helpers/frame-shapes.js";

type OutputInit = NonNullable<EngineCoreOutputsInit["outputs"]>[number];

function output(requestId: string, finishReason: OutputInit["finishReason"] = null): OutputInit {
  return { requestId, newTokenIds: [1, 2, 3], finishReason };
}

function outcome(run: () => OutputMessage): { value: OutputMessage } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

function idsOf(message: OutputMessage): string[] {
  return message.kind === "outputs" ? message.outputs.outputs.map((o) => o.requestId) : [];
}

describe("decodeOutputMessageKnowing", () => {
  const ids = ["ascii-1", "ünïcödé-🚀", "x".repeat(40), "y".repeat(300), "short", ""];
  const frames = encodeEngineCoreOutputs({
    engineIndex: 1,
    timestamp: 3.5,
    outputs: [...ids.map((id) => output(id)), output("done", FinishReason.STOP)],
  });

  it("gives decodeOutputMessage's result with every id known, none, or some", () => {
    const reference = decodeOutputMessage(frames);
    const known: KnownRequest[] = [...ids, "done"].map((requestId) => ({ requestId }));
    const all = Int32Array.from(known, (_, i) => i);
    expect(decodeOutputMessageKnowing(frames, all, known)).toEqual(reference);
    expect(decodeOutputMessageKnowing(frames, new Int32Array(0), [])).toEqual(reference);
    expect(decodeOutputMessageKnowing(frames, Int32Array.from([-1, 3, -1, 1]), known)).toEqual(reference);
    // Known slots in a different order than the outputs, and freed ones (undefined).
    const shuffled = [known[6], undefined, known[0], known[2]];
    expect(decodeOutputMessageKnowing(frames, Int32Array.from([2, 1, 3, -1, -1, -1, 0]), shuffled)).toEqual(
      reference,
    );
  });

  it("reads the wire's id when the known one differs (a slot reused since the routing)", () => {
    const known: KnownRequest[] = [
      { requestId: "ascii-2" }, // same length, last byte differs
      { requestId: "ascii" }, // a prefix
      { requestId: "Ã¼" }, // Latin-1 characters whose codes are UTF-8 bytes of "ü": never taken for it
    ];
    const message = encodeEngineCoreOutputs({ outputs: [output("ascii-1"), output("ascii-1"), output("ü")] });
    expect(idsOf(decodeOutputMessageKnowing(message, Int32Array.from([0, 1, 2]), known))).toEqual([
      "ascii-1",
      "ascii-1",
      "ü",
    ]);
  });

  it("returns the known id string itself when the bytes match", () => {
    const requestId = ["req", "uest", "-42"].join(""); // a string built at run time, not a literal
    const message = encodeEngineCoreOutputs({ outputs: [output("request-42")] });
    const decoded = decodeOutputMessageKnowing(message, Int32Array.from([0]), [{ requestId }]);
    expect(idsOf(decoded)).toEqual([requestId]);
  });

  it("fails as decodeOutputMessage fails, with the same field path", () => {
    // new_token_ids of the second output is a str: the fault lies in outputs[1].
    const bad = encodeValue([
      0,
      [
        ["a", [1], null, null, null, null, null, null, null, null, null, null, null, 0],
        ["b", "oops", null, null, null, null, null, null, null, null, null, null, null, 0],
      ],
      null,
      1.5,
      null,
      null,
      null,
      null,
    ]);
    const known = [{ requestId: "a" }, { requestId: "b" }];
    const plain = outcome(() => decodeOutputMessage([bad]));
    expect(plain).toMatchObject({ error: expect.stringContaining("outputs[1].new_token_ids") });
    expect(outcome(() => decodeOutputMessageKnowing([bad], Int32Array.from([0, 1]), known))).toEqual(plain);
    expect(outcome(() => decodeOutputMessageKnowing([bad], Int32Array.from([-1, 0]), known))).toEqual(plain);
  });

  it("agrees with decodeOutputMessage on arbitrary messages and routings (property)", () => {
    fc.assert(
      fc.property(
        arbitraryFor(EngineCoreOutputsCodec),
        fc.array(fc.integer({ min: -1, max: 6 }), { maxLength: 8 }),
        fc.array(fc.option(fc.string({ maxLength: 12 }), { nil: undefined }), { maxLength: 6 }),
        fc.boolean(),
        (value, slots, extraIds, useWireIds) => {
          const message = encodeEngineCoreOutputs(value as EngineCoreOutputsInit);
          const wireIds =
            (value as { outputs?: { requestId: string }[] }).outputs?.map((o) => o.requestId) ?? [];
          // Known ids that match the wire (the common case) or arbitrary ones (mismatches).
          const known = (useWireIds ? [...wireIds, ...extraIds] : extraIds).map((id) =>
            id === undefined ? undefined : { requestId: id },
          );
          const expected = outcome(() => decodeOutputMessage(message));
          expect(outcome(() => decodeOutputMessageKnowing(message, Int32Array.from(slots), known))).toEqual(
            expected,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
