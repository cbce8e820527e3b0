// The boundary policy, as dependency-cruiser rules: which code may depend on ZeroMQ and on the transport, so
// that every engine socket lives on the runtime worker thread. Paths are repository-relative regular
// expressions: a folder rule ("^tools/probe/") covers everything below it. Every exception says why.
//
// A guarded dependency is matched both resolved (a real path: packages/transport/…, …/node_modules/zeromq/…)
// and unresolved (the bare name, when the importing package has no such dependency installed).
const TRANSPORT = "^packages/transport/|^@vllm-engine-core/transport(/|$)";
const ZEROMQ = "(^|/)node_modules/zeromq/|^zeromq(/|$)";

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "transport-outside-runtime-worker",
      severity: "error",
      comment:
        "Only the runtime worker (packages/runtime/src/runtime-thread/, which owns every engine socket) and the " +
        "transport itself (its sources and tests) may depend on @vllm-engine-core/transport, type imports " +
        "included. Go through @vllm-engine-core/runtime (openConnection) or @vllm-engine-core/client; for " +
        "types, declare them structurally or take them from @vllm-engine-core/config.",
      from: { pathNot: ["^packages/runtime/src/runtime-thread/", "^packages/transport/"] },
      to: { path: TRANSPORT },
    },
    {
      name: "zeromq-outside-allowed-code",
      severity: "error",
      comment:
        "Only the transport opens engine sockets; the other exceptions play the engine or only measure. Engine " +
        "I/O belongs to the runtime worker: use @vllm-engine-core/runtime or @vllm-engine-core/client.",
      from: {
        pathNot: [
          // the only frontend code that opens engine sockets
          "^packages/transport/",
          // plays the engine (engine side of the sockets), in its own process
          "^tools/mock-engine/",
          // probe-only control client that measures the 'sockets on the caller' baseline
          "^tools/probe/",
          // bench-only replay engine: plays the engine in a child process, like the mock engine
          "^tools/bench/src/replay/",
          // test-only rogue engine: plays a misbehaving engine in its own child process
          "^tools/reliability/test/fixtures/rogue-engine-main\\.ts$",
          // test-only raw frontend: hands the mock engine requests the client's validation would refuse
          "^tools/reliability/test/fixtures/raw-frontend\\.ts$",
          // test-only positive control: proves the isolation probe sees zeromq once a thread loads it
          "^packages/runtime/test/fixtures/thread\\.mjs$",
        ],
      },
      to: { path: ZEROMQ },
    },
  ],
  options: {
    // Not followed into, and not scanned when met in a scanned folder; still seen as the target of an import.
    doNotFollow: { path: "(^|/)(node_modules|dist|\\.turbo|\\.test-results)/" },
    exclude: { path: "\\.d\\.[cm]?ts$" },
    // The TypeScript compiler parses every file (src/check.ts refuses to run without it), so `import type`
    // and `typeof import("…")` count, although compiling would erase them.
    parser: "tsc",
    tsPreCompilationDeps: true,
    exoticRequireStrings: ["require.resolve"],
    // Workspace packages resolve to their sources (the condition tsconfig.base.json sets), built or not.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["@vllm-engine-core/source", "import", "require", "node", "default"],
      mainFields: ["module", "main"],
    },
    skipAnalysisNotInRules: true,
  },
};
