import { expectTypeOf, it } from "vitest";
import type {
  DecodedEngineCoreRequest,
  EngineCoreOutput,
  EngineCoreRequest,
  SamplingParams,
  UtilityOutput,
} from "../src/index.js";

it("view types", () => {
  const req: EngineCoreRequest = {
    requestId: "a",
    promptTokenIds: [1],
    arrivalTime: 1,
    samplingParams: { maxTokens: 3 },
  };
  void req;
  expectTypeOf<EngineCoreOutput["finishReason"]>().toEqualTypeOf<0 | 1 | 2 | 3 | 4 | null>();
  expectTypeOf<EngineCoreOutput["newTokenIds"]>().toEqualTypeOf<number[]>();
  expectTypeOf<UtilityOutput["callId"]>().toEqualTypeOf<bigint>();
  expectTypeOf<SamplingParams["temperature"]>().toEqualTypeOf<number | undefined>();
  const asInit = (r: DecodedEngineCoreRequest): EngineCoreRequest => r;
  void asInit;
});
