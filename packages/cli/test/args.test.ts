// Flag values that are negative numbers parse as vLLM's argparse CLIs parse them: Python's argparse takes
// "-1" or "-0.5" as the value of the option before it (its parser has no option that looks like a negative
// number), while node's parseArgs calls such a value ambiguous.
import { describe, expect, it } from "vitest";
import { parseCommandArgs } from "../src/args.js";
import { generateCommand, samplingFromFlags } from "../src/commands/generate.js";
import { CliUsageError } from "../src/errors.js";

const parse = (...argv: string[]) => parseCommandArgs(generateCommand.spec, ["--mock", ...argv]);

describe("negative numbers as flag values", () => {
  it("--top-k -1, --logprobs -1, --seed -1", () => {
    const args = parse("--top-k", "-1", "--logprobs", "-1", "--seed", "-1", "--prompt-token-ids", "1,2");
    expect(samplingFromFlags(args, "generate")).toMatchObject({ topK: -1, logprobs: -1, seed: -1 });
    expect(args.values["prompt-token-ids"]).toEqual(["1,2"]);
  });

  it("negative floats: --presence-penalty -0.5, --frequency-penalty -.25", () => {
    const args = parse("--presence-penalty", "-0.5", "--frequency-penalty", "-.25");
    expect(samplingFromFlags(args, "generate")).toMatchObject({
      presencePenalty: -0.5,
      frequencyPenalty: -0.25,
    });
  });

  it("the --flag=-1 spelling still works, and a negative number after a boolean flag is not its value", () => {
    expect(samplingFromFlags(parse("--top-k=-1"), "generate")).toMatchObject({ topK: -1 });
    // argparse would take "-1" as a positional here; generate takes none, so it is refused.
    expect(() => parse("--ignore-eos", "-1")).toThrow(CliUsageError);
  });

  it("what argparse does not take for a negative number stays an error (a missing value)", () => {
    // argparse's pattern is ^-\d+$|^-\d*\.\d+$: "-1e3" and "-inf" look like options to it too.
    for (const value of ["-1e3", "-inf", "--seed"]) {
      expect(() => parse("--top-k", value), value).toThrow(CliUsageError);
    }
  });

  it("a range error still names the flag", () => {
    expect(() => samplingFromFlags(parse("--top-k", "-2"), "generate")).toThrow(
      /--top-k needs an integer >= -1, got "-2"/,
    );
  });
});
