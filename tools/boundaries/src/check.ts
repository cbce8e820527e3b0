// Runs dependency-cruiser with the boundary rules (../.dependency-cruiser.cjs) over a repository (or a
// fixture tree) and adds the manifest rules dependency-cruiser cannot express (manifests.ts).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, getAvailableTranspilers, type ICruiseResult } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import { checkManifests, type ManifestViolation } from "./manifests.js";

export const CONFIG = fileURLToPath(new URL("../.dependency-cruiser.cjs", import.meta.url));

/** The folders scanned in `root`: each package's and each tool's `src` and `test`. */
export function scanRoots(root: string): string[] {
  return ["packages", "tools"].flatMap((group) =>
    existsSync(join(root, group))
      ? readdirSync(join(root, group)).flatMap((name) =>
          ["src", "test"]
            .map((folder) => `${group}/${name}/${folder}`)
            .filter((path) => statSync(join(root, path), { throwIfNoEntry: false })?.isDirectory()),
        )
      : [],
  );
}

export interface ImportViolation {
  /** The dependency-cruiser rule's name. */
  rule: string;
  /** Repository-relative path of the importing file. */
  file: string;
  /** The module specifier as written in the file. */
  specifier: string;
  /** Where it resolved to, repository-relative (the specifier itself when it did not resolve). */
  resolved: string;
  /** How the file depends on it: import, type-only, export, dynamic-import, require, … ("unknown" when
   * it did not resolve). */
  dependencyTypes: string[];
  /** The rule's reason and what to do instead (its comment in the config). */
  why: string;
  message: string;
}

export type Violation = ({ kind: "import" } & ImportViolation) | ({ kind: "manifest" } & ManifestViolation);

export interface CheckResult {
  violations: Violation[];
  /** Repository-relative paths of the source files dependency-cruiser parsed. */
  scannedFiles: string[];
}

export async function checkBoundaries(root: string): Promise<CheckResult> {
  // Without the TypeScript compiler dependency-cruiser silently falls back to a JavaScript parser that
  // misses type-only imports: refuse to check rather than pass a tree it cannot read.
  const typescript = getAvailableTranspilers().find((transpiler) => transpiler.name === "typescript");
  if (!typescript?.available) {
    throw new Error(
      `check:boundaries: dependency-cruiser cannot load typescript (${typescript?.version ?? "any version"}); run pnpm install`,
    );
  }
  const options = await extractDepcruiseOptions(CONFIG);
  const roots = scanRoots(root);
  const result =
    roots.length === 0
      ? undefined
      : ((await cruise(roots, { ...options, baseDir: root })).output as ICruiseResult);
  const modules = result?.modules ?? [];
  const comments = new Map(options.ruleSet?.forbidden?.map((rule) => [rule.name, rule.comment]) ?? []);
  const violations: Violation[] = (result?.summary.violations ?? []).map((violation) => {
    const dependency = modules
      .find((module) => module.source === violation.from)
      ?.dependencies.find((candidate) => candidate.resolved === violation.to);
    const specifier = dependency?.module ?? violation.to;
    const dependencyTypes = dependency?.dependencyTypes ?? [];
    return {
      kind: "import",
      rule: violation.rule.name,
      file: violation.from,
      specifier,
      resolved: violation.to,
      dependencyTypes,
      why: comments.get(violation.rule.name) ?? "",
      message: `${violation.from} → "${specifier}"${violation.to === specifier ? "" : ` (${violation.to})`}`,
    };
  });
  violations.push(...checkManifests(root).map((v) => ({ kind: "manifest" as const, ...v })));
  const scannedFiles = modules
    .filter((module) => !module.couldNotResolve && !module.coreModule && !module.matchesDoNotFollow)
    .map((module) => module.source);
  return { violations, scannedFiles };
}

/** One block per rule: its name and reason, then each offending import (or manifest entry). */
export function formatViolations(violations: readonly Violation[]): string {
  const byRule = new Map<string, Violation[]>();
  for (const v of violations) {
    const rule = v.kind === "import" ? v.rule : "manifest";
    byRule.set(rule, [...(byRule.get(rule) ?? []), v]);
  }
  return [...byRule]
    .map(([rule, list]) => {
      const first = list[0]!;
      const why = first.kind === "import" ? first.why : "a manifest declares a package it must not depend on";
      return [`  [${rule}] ${why}`, ...list.map((v) => `    ${v.message}`)].join("\n");
    })
    .join("\n");
}
