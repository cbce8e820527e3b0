// Writes the vLLM version compatibility table (generated from the codec's field tables) as Markdown.
//   tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts [--out FILE]
// Without --out it prints to stdout.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compatibilityMarkdown } from "../src/index.js";

const { values } = parseArgs({ options: { out: { type: "string" } } });
const markdown = compatibilityMarkdown();
if (values.out === undefined) process.stdout.write(markdown);
else writeFileSync(values.out, markdown);
