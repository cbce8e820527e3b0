// VERSIONS.md and the root README embed the generated compatibility table; each must be the generator's
// current output (regenerate with `tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts
// --doc VERSIONS.md`, and `--doc ../../README.md`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compatibilityMarkdown, withCompatibilityTable } from "../src/index.js";

const read = (...path: string[]) => readFileSync(join(import.meta.dirname, "..", ...path), "utf8");

describe.each([
  ["VERSIONS.md", read("VERSIONS.md")],
  ["the root README", read("..", "..", "README.md")],
])("%s", (_name, doc) => {
  it("carries the compatibility table generated from the field tables", () => {
    expect(doc).toContain(compatibilityMarkdown());
    expect(withCompatibilityTable(doc)).toBe(doc);
  });
});
