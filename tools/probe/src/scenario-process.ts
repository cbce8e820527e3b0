// Running a tool's scenarios each in a fresh node process (clean heap, threads and sockets; nothing of one
// leaks into the next): the parent starts `<entry> <name> '<json config>'`, the child runs the registered
// scenario of that name and prints its result as the last line of its stdout. Logs go to stderr.
import { spawn } from "node:child_process";
import { basename } from "node:path";

export interface ScenarioProcessOptions {
  /** Names the scenario in errors ("scenario floor", "probe phase \"before\""). */
  label: string;
  /** Node flags before the entry script (e.g. --expose-gc). */
  nodeFlags?: string[];
  /** Kills a scenario still running after this long (its engine and helpers exit with it); default none. */
  timeoutMs?: number;
}

/** Parent side: runs scenario `name` of the child entry script `entry` and resolves with its JSON result. */
export function runScenarioProcess<T>(
  entry: string,
  name: string,
  config: object,
  { label, nodeFlags = [], timeoutMs }: ScenarioProcessOptions,
): Promise<T> {
  const args = [...nodeFlags, entry, name, JSON.stringify(config)];
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    let timedOut = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split("\n").pop();
      if (timedOut) reject(new Error(`${label} did not finish within ${timeoutMs! / 1000} s and was killed`));
      else if (code !== 0 || !last)
        reject(new Error(`${label} failed (exit code ${code}, signal ${signal})`));
      else resolveRun(JSON.parse(last) as T);
    });
  });
}

// biome-ignore lint/suspicious/noExplicitAny: configs are checked by each scenario's own parameter type
export type ScenarioRegistry = Record<string, (config: any) => Promise<unknown>>;

/** Child side: runs the scenario named by the first argument with the JSON config of the second. */
export async function runScenarioFromArgv(scenarios: ScenarioRegistry): Promise<void> {
  const [name, config] = process.argv.slice(2);
  const scenario = name === undefined ? undefined : scenarios[name];
  if (scenario === undefined) {
    const entry = basename(process.argv[1] ?? "main", ".js");
    throw new Error(`usage: ${entry} <${Object.keys(scenarios).join("|")}> '<json config>'`);
  }
  const result = await scenario(JSON.parse(config ?? "{}"));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
