import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { findImports, type ImportSite } from "./imports.js";
import {
  DEPENDENCY_FIELDS,
  IMPORT_RULES,
  type ImportRule,
  MANIFEST_RULES,
  SCAN_ROOTS,
  SKIPPED_DIRECTORIES,
  SOURCE_EXTENSIONS,
} from "./policy.js";

export interface ImportViolation {
  kind: "import";
  rule: ImportRule["id"];
  /** Repository-relative POSIX path of the importing file. */
  file: string;
  line: number;
  column: number;
  specifier: string;
  importKind: ImportSite["kind"];
  message: string;
}

export interface ManifestViolation {
  kind: "manifest";
  file: string;
  field: string;
  dependency: string;
  message: string;
}

export type Violation = ImportViolation | ManifestViolation;

export interface CheckResult {
  violations: Violation[];
  /** Repository-relative paths of every file that was parsed. */
  scannedFiles: string[];
}

/** Checks the repository (or fixture tree) at `root` against the boundary policy. */
export function checkRepository(root: string): CheckResult {
  const scannedFiles = listSourceFiles(root);
  const violations: Violation[] = [];
  for (const file of scannedFiles) {
    const text = readFileSync(join(root, file), "utf8");
    for (const site of findImports(file, text)) {
      for (const rule of IMPORT_RULES) {
        if (!dependsOn(rule, root, file, site.specifier)) continue;
        if (rule.allowed.some((entry) => file.startsWith(entry.path))) continue;
        violations.push({
          kind: "import",
          rule: rule.id,
          file,
          line: site.line,
          column: site.column,
          specifier: site.specifier,
          importKind: site.kind,
          message:
            `${file}:${site.line}:${site.column} ${site.kind} "${site.specifier}": only ` +
            `${rule.allowed.map((entry) => entry.path).join(", ")} may depend on ${rule.target}; ${rule.fix}`,
        });
      }
    }
  }
  violations.push(...checkManifests(root));
  return { violations, scannedFiles };
}

export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `  [${v.kind === "import" ? v.rule : "manifest"}] ${v.message}`).join("\n");
}

function dependsOn(rule: ImportRule, root: string, file: string, specifier: string): boolean {
  if (rule.modules.some((name) => specifier === name || specifier.startsWith(`${name}/`))) return true;
  if (!specifier.startsWith(".") && !specifier.startsWith("/")) return false;
  // A relative (or absolute) path that reaches into a guarded directory is the same dependency.
  const target = toPosix(relative(root, resolve(root, dirname(file), specifier)));
  if (rule.directories.some((dir) => `${target}/`.startsWith(dir))) return true;
  return rule.modules.some(
    (name) => target.includes(`node_modules/${name}/`) || target.endsWith(`node_modules/${name}`),
  );
}

function checkManifests(root: string): ManifestViolation[] {
  const violations: ManifestViolation[] = [];
  for (const rule of MANIFEST_RULES) {
    const path = join(root, rule.manifest);
    if (!existsSync(path)) continue;
    const manifest = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    for (const field of DEPENDENCY_FIELDS) {
      const deps = manifest[field];
      if (typeof deps !== "object" || deps === null) continue;
      for (const dependency of rule.forbidden) {
        if (!Object.hasOwn(deps, dependency)) continue;
        violations.push({
          kind: "manifest",
          file: rule.manifest,
          field,
          dependency,
          message: `${rule.manifest} lists "${dependency}" in ${field}: ${rule.why}`,
        });
      }
    }
  }
  return violations;
}

function listSourceFiles(root: string): string[] {
  const files: string[] = [];
  for (const pattern of SCAN_ROOTS) {
    for (const dir of expand(root, pattern)) walk(root, dir, files);
  }
  return [...new Set(files)].sort();
}

/** Expands one-level "*" segments of a scan root against the directories that exist. */
function expand(root: string, pattern: string): string[] {
  let paths = [""];
  for (const segment of pattern.split("/")) {
    const next: string[] = [];
    for (const base of paths) {
      if (segment === "*") {
        const absolute = join(root, base);
        if (!isDirectory(absolute)) continue;
        for (const entry of readdirSync(absolute, { withFileTypes: true })) {
          if (entry.isDirectory() && !SKIPPED_DIRECTORIES.includes(entry.name))
            next.push(posix.join(base, entry.name));
        }
      } else {
        next.push(posix.join(base, segment));
      }
    }
    paths = next;
  }
  return paths.filter((path) => isDirectory(join(root, path)));
}

function walk(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.includes(entry.name)) walk(root, path, out);
    } else if (SOURCE_EXTENSIONS.some((ext) => entry.name.endsWith(ext)) && !entry.name.endsWith(".d.ts")) {
      out.push(path);
    }
  }
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function toPosix(path: string): string {
  return path.split(sep).join("/");
}
