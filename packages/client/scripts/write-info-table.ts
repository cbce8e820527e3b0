// Writes the per-version info table into the README (between the info-table markers), or prints it.
//   tsx --conditions=@vllm-engine-core/source scripts/write-info-table.ts            # to stdout
//   tsx --conditions=@vllm-engine-core/source scripts/write-info-table.ts --doc README.md
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { infoTableMarkdown, withInfoTable } from "./info-table.js";

const { values } = parseArgs({ options: { doc: { type: "string" } } });
if (values.doc !== undefined) writeFileSync(values.doc, withInfoTable(readFileSync(values.doc, "utf8")));
else process.stdout.write(infoTableMarkdown());
