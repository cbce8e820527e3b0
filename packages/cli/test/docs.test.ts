// The docs cannot fall behind the flag tables: the README names every command and every flag, and `--help` of
// every command (a real child process) lists all of its flags.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { COMMON_FLAGS, CONNECTION_FLAGS } from "../src/args.js";
import { COMMANDS } from "../src/commands/index.js";
import { PACKAGE_DIR, runCli } from "./helpers.js";

const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");

describe("README", () => {
  test.each(COMMANDS.map((c) => [c.spec.name, c]))("documents %s and each of its flags", (name, command) => {
    expect(readme).toMatch(new RegExp(`^#{3,4} \`${name}`, "m"));
    for (const flag of command.spec.flags) expect(readme, `--${flag.name}`).toContain(`\`--${flag.name}`);
  });

  test("documents every connection and common flag", () => {
    for (const flag of [...CONNECTION_FLAGS, ...COMMON_FLAGS]) expect(readme).toContain(`--${flag.name}`);
  });
});

describe.concurrent("--help", () => {
  test.each(COMMANDS.map((c) => [c.spec.name, c]))(
    "%s --help lists its flags and exits 0",
    async (name, command) => {
      const r = await runCli([name, "--help"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: vllm-engine-core ${name}`));
      const flags = [
        ...command.spec.flags,
        ...(command.spec.connects ? CONNECTION_FLAGS : []),
        ...COMMON_FLAGS,
      ];
      for (const flag of flags) expect(r.stdout).toMatch(new RegExp(`^  --${flag.name}\\b`, "m"));
    },
  );
});
