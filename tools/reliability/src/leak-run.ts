// Runs dist/leak-child.mjs in a child `node --expose-gc` process and returns its LeakReport.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LeakReport } from "./leak-scenario.js";

export async function runLeakChild(
  entry: string | URL,
  args: readonly string[],
  onProgress: (text: string) => void = () => {},
): Promise<LeakReport> {
  const path = entry instanceof URL ? fileURLToPath(entry) : entry;
  if (!existsSync(path)) throw new Error(`${path} is missing: run the reliability package's build first`);
  const child = spawn(process.execPath, ["--expose-gc", path, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
    onProgress(String(d));
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`leak child exited with ${code}:\n${stderr}`);
  return JSON.parse(stdout.trim().split("\n").pop()!) as LeakReport;
}
