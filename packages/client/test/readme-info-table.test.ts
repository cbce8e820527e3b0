// The README's per-version info table must be the generator's current output
// (regenerate with `pnpm --filter @vllm-engine-core/client run info-table`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { infoTableMarkdown, withInfoTable } from "../scripts/info-table.js";

const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");

describe("README info table", () => {
  it("is the table generated from the codec's registration field table", () => {
    expect(readme).toContain(infoTableMarkdown());
    expect(withInfoTable(readme)).toBe(readme);
  });
});
