// The boundary policy: which code may depend on ZeroMQ and on the transport. Paths are repository-relative and
// POSIX-style; an allowed path is a prefix (a directory ending in "/" covers everything below it, a file path
// only that file). Every exception names its reason.

/** What a guarded dependency is and who may use it. */
export interface ImportRule {
  id: "transport-outside-runtime-worker" | "zeromq-outside-allowed-code";
  /** Short name used in messages. */
  target: string;
  /** Bare module names (and their subpaths) that count as this dependency. */
  modules: readonly string[];
  /** Repository directories whose files count as this dependency when imported by a relative path. */
  directories: readonly string[];
  /** Repository paths allowed to import it, each with the reason. */
  allowed: readonly { path: string; why: string }[];
  /** What to do instead. */
  fix: string;
}

export const IMPORT_RULES: readonly ImportRule[] = [
  {
    id: "transport-outside-runtime-worker",
    target: "@vllm-engine-core/transport",
    modules: ["@vllm-engine-core/transport"],
    directories: ["packages/transport/"],
    allowed: [
      { path: "packages/runtime/src/runtime-thread/", why: "the runtime worker owns every engine socket" },
      { path: "packages/transport/", why: "the transport itself and its own tests" },
    ],
    fix: "go through @vllm-engine-core/runtime (openConnection) or @vllm-engine-core/client; for types, declare them structurally",
  },
  {
    id: "zeromq-outside-allowed-code",
    target: "zeromq",
    modules: ["zeromq"],
    directories: [],
    allowed: [
      { path: "packages/transport/", why: "the only frontend code that opens engine sockets" },
      {
        path: "tools/mock-engine/",
        why: "plays the engine (engine side of the sockets), in its own process",
      },
      {
        path: "tools/probe/",
        why: "probe-only control client that measures the 'sockets on the caller' baseline",
      },
      {
        path: "tools/bench/src/replay/",
        why: "bench-only replay engine: plays the engine in a child process, like the mock engine",
      },
      {
        path: "tools/reliability/test/fixtures/rogue-engine-main.ts",
        why: "test-only rogue engine: plays a misbehaving engine in its own child process",
      },
      {
        path: "tools/reliability/test/fixtures/raw-frontend.ts",
        why: "test-only raw frontend: hands the mock engine requests the client's validation would refuse, so the engine judges every case",
      },
      {
        path: "packages/runtime/test/fixtures/thread.mjs",
        why: "test-only positive control: proves the isolation probe sees zeromq once a thread loads it",
      },
    ],
    fix: "engine I/O belongs to the runtime worker: use @vllm-engine-core/runtime or @vllm-engine-core/client",
  },
];

/** Directories scanned for imports; "*" matches one directory level (each package / tool). */
export const SCAN_ROOTS: readonly string[] = [
  "packages/*/src",
  "packages/*/test",
  "tools/*/src",
  "tools/*/test",
];

/** Source file extensions that are parsed. */
export const SOURCE_EXTENSIONS: readonly string[] = [
  ".ts",
  ".tsx",
  ".mts",
  ".cts",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
];

/** Directory names never descended into. */
export const SKIPPED_DIRECTORIES: readonly string[] = ["node_modules", "dist", ".turbo", ".test-results"];

/** Manifests that must not declare the guarded packages in any dependency field. */
export const MANIFEST_RULES: readonly { manifest: string; forbidden: readonly string[]; why: string }[] = [
  {
    manifest: "packages/client/package.json",
    forbidden: ["zeromq", "@vllm-engine-core/transport"],
    why: "the public client never loads ZeroMQ or the transport, not even transitively by declaration",
  },
  {
    manifest: "packages/cli/package.json",
    forbidden: ["@vllm-engine-core/transport", "@vllm-engine-core/runtime"],
    why: "the command line is built only on the public client (zeromq is its dependency for the bundled mock engine's child process)",
  },
  {
    manifest: "packages/errors/package.json",
    forbidden: [
      "zeromq",
      "@vllm-engine-core/transport",
      "@vllm-engine-core/protocol",
      "@vllm-engine-core/config",
      "@vllm-engine-core/runtime",
      "@vllm-engine-core/client",
    ],
    why: "the error family sits below every package that raises its errors, and loads on any thread",
  },
  {
    manifest: "packages/config/package.json",
    forbidden: ["zeromq", "@vllm-engine-core/transport"],
    why: "the configuration schema is loaded by the public client on the calling thread, and imported by the transport",
  },
  {
    manifest: "packages/text/package.json",
    forbidden: ["zeromq", "@vllm-engine-core/transport", "@vllm-engine-core/runtime"],
    why: "the text layer is built on the public client API only (@vllm-engine-core/client)",
  },
  {
    manifest: "packages/server/package.json",
    forbidden: ["zeromq", "@vllm-engine-core/transport", "@vllm-engine-core/runtime"],
    why: "the HTTP server is built on the public client and the text layer only",
  },
  {
    manifest: "packages/protocol/package.json",
    forbidden: ["zeromq", "@vllm-engine-core/transport"],
    why: "the protocol package is a pure codec, loadable on any thread",
  },
];

export const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "peerDependencies",
  "optionalDependencies",
] as const;
