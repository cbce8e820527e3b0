import { describe, expect, it } from "vitest";
import {
  EXECUTOR_CLASS,
  executorEnv,
  modelDirs,
  RealEngineOptionsError,
  realEngineArgv,
} from "../../src/index.ts";

describe("realEngineArgv", () => {
  it("builds the headless command line of the kit README with the model-free executor", () => {
    expect(realEngineArgv({ port: 29550 })).toEqual([
      "serve",
      modelDirs.dense,
      "--headless",
      "--data-parallel-address",
      "127.0.0.1",
      "--data-parallel-rpc-port",
      "29550",
      "--skip-tokenizer-init",
      "--distributed-executor-backend",
      EXECUTOR_CLASS,
      "--load-format",
      "dummy",
      "--enforce-eager",
      "--block-size",
      "16",
    ]);
  });

  it("skipTokenizerInit: false leaves out --skip-tokenizer-init (the engine loads the model folder's tokenizer)", () => {
    expect(realEngineArgv({ port: 29550, skipTokenizerInit: false })).not.toContain("--skip-tokenizer-init");
    expect(realEngineArgv({ port: 29550, skipTokenizerInit: true })).toContain("--skip-tokenizer-init");
  });

  it("passes data parallelism, engine flags and extra flags through", () => {
    const argv = realEngineArgv({
      port: 1234,
      modelDir: modelDirs.moe,
      dataParallelSize: 2,
      maxModelLen: 512,
      maxNumSeqs: 8,
      maxNumBatchedTokens: 32,
      asyncScheduling: true,
      extraFlags: ["--no-enable-prefix-caching"],
    });
    expect(argv.join(" ")).toContain("--data-parallel-size 2 --data-parallel-size-local 2");
    expect(argv.join(" ")).toContain(
      "--max-model-len 512 --max-num-seqs 8 --max-num-batched-tokens 32 --async-scheduling --no-enable-prefix-caching",
    );
    expect(argv[1]).toBe(modelDirs.moe);
  });

  it("rejects options that cannot work, naming them", () => {
    expect(() => realEngineArgv({ port: 0 })).toThrow(RealEngineOptionsError);
    expect(() => realEngineArgv({ port: 1, dataParallelSize: 0 })).toThrow(/dataParallelSize/);
    expect(() => realEngineArgv({ port: 1, maxModelLen: 1.5 })).toThrow(/maxModelLen/);
  });
});

describe("executorEnv", () => {
  it("maps each executor option to its environment variable", () => {
    expect(
      executorEnv({
        kvCacheBytes: 1024,
        stepMs: 2,
        tokenUs: 3,
        failAtStep: 4,
        scriptFile: "/s.json",
        scriptEnd: "eos",
        eosTokenId: 7,
        logRequests: true,
      }),
    ).toEqual({
      VLLM_MODEL_FREE_KV_CACHE_BYTES: "1024",
      VLLM_MODEL_FREE_STEP_MS: "2",
      VLLM_MODEL_FREE_TOKEN_US: "3",
      VLLM_MODEL_FREE_FAIL_AT_STEP: "4",
      VLLM_MODEL_FREE_SCRIPT: "/s.json",
      VLLM_MODEL_FREE_SCRIPT_END: "eos",
      VLLM_MODEL_FREE_EOS_TOKEN_ID: "7",
      VLLM_MODEL_FREE_LOG_REQUESTS: "1",
    });
  });

  it("rejects negative and unknown options", () => {
    expect(() => executorEnv({ stepMs: -1 })).toThrow(/executor.stepMs/);
    expect(() => executorEnv({ bogus: 1 } as never)).toThrow(/unknown option/);
  });
});
