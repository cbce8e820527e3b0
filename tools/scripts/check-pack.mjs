#!/usr/bin/env node
// `check:pack` of a publishable package (run in its directory, after its build): packs it the way it is
// published (`pnpm pack`, which also rewrites `workspace:` ranges) into a temp directory and checks the
// tarball, not the work tree:
//   1. publint --strict and @arethetypeswrong/cli --profile esm-only;
//   2. what is shipped: every source map resolves (each source is in the tarball or embedded in the map),
//      every `sourceMappingURL` names a shipped map, no `@internal` member is left in a .d.ts, no test file
//      is shipped, and every bare import in shipped JavaScript is a declared dependency or a Node builtin;
//   3. as a consumer sees it: the tarball and those of its workspace dependencies, unpacked side by side in
//      node_modules, type-check with `skipLibCheck: false` (a stripped `@internal` member that another
//      published .d.ts still names fails here) and import in plain Node.
// Every finding is listed; the exit code is 1 when there is any.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { isBuiltin } from "node:module";
import { constants as osConstants, tmpdir } from "node:os";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const bin = (name) => join(root, "node_modules", ".bin", name);

/** Plain text: the findings are read in logs, and CI=true or FORCE_COLOR would turn colours on. */
const plainEnv = { ...process.env, NO_COLOR: "1" };
delete plainEnv.FORCE_COLOR;

/** Children and temp directories of this run: a signal (turbo cancelling the task) ends and removes them. */
const children = new Set();
const workDirs = new Set();
function removeOnSignals() {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.once(signal, () => {
      for (const child of children) child.kill("SIGTERM");
      for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
      process.exit(128 + osConstants.signals[signal]);
    });
  }
}

/** Runs a command to its end (asynchronously, so that a signal is handled meanwhile). */
function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: plainEnv, ...options, stdio: ["ignore", "pipe", "pipe"] });
    children.add(child);
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.once("error", (error) => {
      children.delete(child);
      reject(error);
    });
    child.once("close", (code) => {
      children.delete(child);
      resolve({ ok: code === 0, output: output.trim() });
    });
  });
}

/** Name → directory of every workspace package. */
function workspacePackages() {
  const found = new Map();
  for (const group of ["packages", "tools"]) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir)) {
      const manifest = join(groupDir, name, "package.json");
      if (existsSync(manifest))
        found.set(JSON.parse(readFileSync(manifest, "utf8")).name, join(groupDir, name));
    }
  }
  return found;
}

/** `dir` and the workspace packages it depends on at run time (transitively): what a consumer installs. */
function publishedClosure(dir, workspace, seen = new Map()) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (seen.has(manifest.name)) return seen;
  seen.set(manifest.name, dir);
  for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
    const depDir = workspace.get(dep);
    if (depDir !== undefined) publishedClosure(depDir, workspace, seen);
  }
  return seen;
}

/** The pinned pnpm: the one running this script's task, else the one `npm test` installs into .tools. */
function pnpmCommand() {
  const running = process.env.npm_execpath;
  if (running !== undefined && /pnpm\.c?js$/.test(running)) return [process.execPath, running];
  const pinned = join(root, ".tools", "node_modules", "pnpm", "bin", "pnpm.cjs");
  return existsSync(pinned) ? [process.execPath, pinned] : ["pnpm"];
}

async function pack(dir, destination) {
  const [command, ...prefix] = pnpmCommand();
  const r = await run(command, [...prefix, "pack", "--json", "--pack-destination", destination], {
    cwd: dir,
  });
  if (!r.ok) throw new Error(`pnpm pack failed in ${relative(root, dir) || dir}:\n${r.output}`);
  const info = JSON.parse(r.output.slice(r.output.indexOf("{")));
  return info.filename.startsWith("/") ? info.filename : join(destination, info.filename);
}

async function unpack(tarball, into) {
  mkdirSync(into, { recursive: true });
  const r = await run("tar", ["-xzf", tarball, "-C", into, "--strip-components=1"]);
  if (!r.ok) throw new Error(`cannot unpack ${tarball}: ${r.output}`);
}

function listFiles(dir, prefix = "") {
  const files = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...listFiles(path, `${prefix}${name}/`));
    else files.push(`${prefix}${name}`);
  }
  return files;
}

/** The package name of a bare specifier (`@scope/name/deep` → `@scope/name`), or undefined when not bare. */
function packageOf(specifier) {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("#")) return undefined;
  if (specifier.startsWith("node:") || isBuiltin(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const IMPORT =
  /(?:^|[\s;})])(?:import|export)\s*(?:[\w*${},\s]+?\s*from\s*)?["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** Findings about the unpacked tarball's contents (paths relative to it). */
export function inspectContents(dir) {
  const findings = [];
  const unresolvedSources = [];
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const files = listFiles(dir);
  const shipped = new Set(files);
  const declared = new Set([
    manifest.name,
    ...Object.keys({
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    }),
  ]);
  for (const file of files) {
    const text = () => readFileSync(join(dir, file), "utf8");
    if (/(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]sx?$/.test(file)) {
      findings.push(`${file}: a test file is shipped (exclude it in "files")`);
    }
    if (file.endsWith(".map")) {
      const map = JSON.parse(text());
      const base = posix.join(posix.dirname(file), map.sourceRoot ?? "");
      map.sources.forEach((source, i) => {
        const target = posix.normalize(posix.join(base, source));
        if (!shipped.has(target) && typeof map.sourcesContent?.[i] !== "string") {
          unresolvedSources.push(`${file} → ${source}`);
        }
      });
    }
    if (/\.(js|mjs|d\.ts|d\.mts)$/.test(file)) {
      const content = text();
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(content)?.[1];
      if (url !== undefined && !url.startsWith("data:")) {
        const target = posix.normalize(posix.join(posix.dirname(file), url));
        if (!shipped.has(target)) findings.push(`${file}: sourceMappingURL ${url} is not shipped`);
      }
      if (file.endsWith(".d.ts") || file.endsWith(".d.mts")) {
        if (content.includes("@internal")) {
          findings.push(`${file}: an @internal declaration is published (build with stripInternal)`);
        }
      } else {
        for (const match of content.matchAll(IMPORT)) {
          const name = packageOf(match[1] ?? match[2]);
          if (name !== undefined && !declared.has(name)) {
            findings.push(`${file}: imports "${name}", which is not in dependencies or peerDependencies`);
          }
        }
      }
    }
  }
  if (unresolvedSources.length > 0) {
    findings.push(
      `${unresolvedSources.length} source map entries name a source that is neither shipped nor embedded in the` +
        ` map (sources that "files" leaves out, or a stale build output: rebuild from an empty dist/), e.g. ` +
        unresolvedSources.slice(0, 3).join(", "),
    );
  }
  return [...new Set(findings)];
}

/**
 * The registry (non-workspace) dependencies of the closure, linked into the consumer's node_modules from the
 * workspace install: what npm would fetch for a consumer, without a network. Their own dependencies resolve from
 * their real paths in pnpm's store layout.
 */
function linkRegistryDependencies(closure, consumerModules) {
  for (const packageDir of closure.values()) {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      if (closure.has(dep)) continue;
      const target = join(consumerModules, dep);
      if (existsSync(target)) continue;
      const installed = join(packageDir, "node_modules", dep);
      if (!existsSync(installed)) continue;
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(realpathSync(installed), target, "dir");
    }
  }
}

/** Type-checks and imports `name` from a consumer directory whose node_modules holds the unpacked tarballs. */
async function checkAsConsumer(consumer, name) {
  const findings = [];
  writeFileSync(
    join(consumer, "package.json"),
    `${JSON.stringify({ name: "consumer", private: true, type: "module" })}\n`,
  );
  writeFileSync(
    join(consumer, "index.ts"),
    `import * as api from "${name}";\nexport const names = Object.keys(api);\n`,
  );
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2023", "ESNext.Disposable"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ["node"],
      typeRoots: [join(root, "node_modules", "@types")],
    },
    files: ["index.ts"],
  };
  writeFileSync(join(consumer, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const tsc = await run(process.execPath, [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    consumer,
  ]);
  if (!tsc.ok)
    findings.push(`the published types do not compile for a consumer (skipLibCheck: false):\n${tsc.output}`);
  const imported = await run(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const m = await import(${JSON.stringify(name)}); if (!Object.keys(m).length) throw new Error("no exports");`,
    ],
    { cwd: consumer },
  );
  if (!imported.ok)
    findings.push(`import("${name}") fails with only the published packages installed:\n${imported.output}`);
  return findings;
}

export async function checkPack(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (manifest.private) return { name: manifest.name, findings: [], skipped: true };
  const work = mkdtempSync(join(tmpdir(), "check-pack-"));
  workDirs.add(work);
  try {
    const findings = [];
    const closure = publishedClosure(dir, workspacePackages());
    const consumerModules = join(work, "consumer", "node_modules");
    let own;
    for (const [name, packageDir] of closure) {
      const tarball = await pack(packageDir, join(work, "tarballs"));
      await unpack(tarball, join(consumerModules, name));
      if (name === manifest.name) own = tarball;
    }
    linkRegistryDependencies(closure, consumerModules);
    for (const [tool, args] of [
      ["publint", ["run", "--strict", own]],
      ["attw", [own, "--profile", "esm-only", "--no-definitely-typed", "--no-emoji", "--no-color"]],
    ]) {
      const r = await run(bin(tool), args);
      if (!r.ok) findings.push(`${tool} ${args.filter((a) => a !== own).join(" ")} reports:\n${r.output}`);
    }
    findings.push(...inspectContents(join(consumerModules, manifest.name)));
    findings.push(...(await checkAsConsumer(join(work, "consumer"), manifest.name)));
    return { name: manifest.name, findings, files: listFiles(join(consumerModules, manifest.name)).length };
  } finally {
    rmSync(work, { recursive: true, force: true });
    workDirs.delete(work);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  removeOnSignals();
  const dir = process.argv[2] ?? process.cwd();
  const { name, findings, skipped, files } = await checkPack(dir);
  if (skipped) {
    console.log(`check:pack: ${name} is private and not published; nothing to pack`);
  } else if (findings.length > 0) {
    console.error(`check:pack: ${name}: ${findings.length} finding${findings.length === 1 ? "" : "s"}`);
    for (const finding of findings) console.error(`- ${finding}`);
    process.exit(1);
  } else {
    console.log(
      `check:pack: ${name}: ${files} files; publint --strict, attw esm-only, contents, consumer types and import all clean`,
    );
  }
}
