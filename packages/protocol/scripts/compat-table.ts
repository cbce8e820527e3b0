// Prints the vLLM version compatibility table (generated from the codec's field tables) as Markdown.
//   tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts            # to stdout
//   tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts --out F    # into file F
//   tsx --conditions=@vllm-engine-core/source scripts/compat-table.ts --doc F    # between the
//       <!-- compat-table:start --> / <!-- compat-table:end --> markers of F (VERSIONS.md, a README)
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compatibilityMarkdown, withCompatibilityTable } from "../src/index.js";

const { values } = parseArgs({ options: { out: { type: "string" }, doc: { type: "string" } } });
const markdown = compatibilityMarkdown();
if (values.doc !== undefined)
  writeFileSync(values.doc, withCompatibilityTable(readFileSync(values.doc, "utf8")));
else if (values.out !== undefined) writeFileSync(values.out, markdown);
else process.stdout.write(markdown);
