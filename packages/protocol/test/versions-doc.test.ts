// VERSIONS.md embeds the generated compatibility table; it must be the generator's current output
// (regenerate with `tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts --doc VERSIONS.md`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compatibilityMarkdown, withCompatibilityTable } from "../src/index.js";

const doc = readFileSync(join(import.meta.dirname, "..", "VERSIONS.md"), "utf8");

describe("VERSIONS.md", () => {
  it("carries the compatibility table generated from the field tables", () => {
    expect(doc).toContain(compatibilityMarkdown());
    expect(withCompatibilityTable(doc)).toBe(doc);
  });
});
