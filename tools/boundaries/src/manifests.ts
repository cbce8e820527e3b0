// What dependency-cruiser cannot see: a package.json that declares a guarded package without importing it.
// Such a declaration still installs ZeroMQ or the transport with the package, so these manifests must not
// list them in any dependency field. Every rule names its reason.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

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

const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"];

export interface ManifestViolation {
  file: string;
  field: string;
  dependency: string;
  message: string;
}

export function checkManifests(root: string): ManifestViolation[] {
  const violations: ManifestViolation[] = [];
  for (const rule of MANIFEST_RULES) {
    const path = join(root, rule.manifest);
    if (!existsSync(path)) continue;
    const manifest = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    for (const field of DEPENDENCY_FIELDS) {
      const deps = manifest[field];
      if (typeof deps !== "object" || deps === null) continue;
      for (const dependency of rule.forbidden.filter((name) => Object.hasOwn(deps, name))) {
        const message = `${rule.manifest} lists "${dependency}" in ${field}: ${rule.why}`;
        violations.push({ file: rule.manifest, field, dependency, message });
      }
    }
  }
  return violations;
}
