// The root README's "OpenAI-compatible server in one command" must work as written: its `npm run serve`
// resolves (root package.json) to `vllm-engine-core serve --mock` after a build, and that command plus the
// README's `curl`, run verbatim by a shell from the repository root, answer the chat the echoing mock engine
// gives; Ctrl-C (SIGINT to the process group, as a terminal sends it) then leaves nothing running.
//
// Only the port differs: the README uses vLLM's default :8000, which a developer's machine may well have
// taken (by a real `vllm serve`), so the test appends `--port <free port>` and points the curl there. The
// `npm run serve` wrapper itself (with-pnpm: pnpm install + turbo build) is not re-run inside the test
// suite — the suite has just built everything, and a nested install/build would rewrite files other
// packages' tests are reading; the script chain is checked instead.
import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { descendants, freePort, isAlive, PACKAGE_DIR } from "./helpers.js";

const ROOT = join(PACKAGE_DIR, "..", "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const rootScripts = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;

/** The commands of the sh block under the heading, comments dropped, `\` continuations joined. */
function quickStartCommands(): string[] {
  const section = readme.slice(readme.indexOf("### An OpenAI-compatible server in one command"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error("no sh block under the quick start's server heading");
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter((l) => l !== "");
}

describe("root README quick start: the server", () => {
  test("`npm run serve` is a build followed by `vllm-engine-core serve --mock`, listening on :8000 by default", () => {
    const [serve, curl] = quickStartCommands();
    expect(serve).toBe("npm run serve");
    expect(curl).toMatch(/^curl .*localhost:8000\/v1\/chat\/completions/);
    expect(rootScripts.serve).toBe("node tools/scripts/with-pnpm.mjs serve:run");
    const steps = rootScripts["serve:run"]!.split(" && ");
    expect(steps[0]).toMatch(/^turbo run build --filter=@vllm-engine-core\/cli\.\.\./);
    expect(steps.at(-1)).toBe("node packages/cli/bin/vllm-engine-core.js serve --mock");
    const help = readFileSync(join(PACKAGE_DIR, "src", "commands", "serve.ts"), "utf8");
    expect(help).toMatch(/const DEFAULT_PORT = 8000;/);
  });

  test("the serve command and the curl, run by a shell as written, answer the echoed chat; Ctrl-C leaves nothing", async () => {
    const [, curl] = quickStartCommands();
    const serveCommand = rootScripts["serve:run"]!.split(" && ").at(-1)!;
    const port = await freePort();
    const child = spawn("sh", ["-c", `${serveCommand} --port ${port}`], {
      cwd: ROOT,
      detached: true, // its own process group, like a terminal's foreground job
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      output += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    const seen = new Set<number>();
    const sampler = setInterval(() => {
      for (const p of descendants(child.pid!)) seen.add(p);
    }, 50);
    try {
      const deadline = Date.now() + 40_000;
      while (!output.includes(`on http://127.0.0.1:${port} `)) {
        if (Date.now() > deadline) throw new Error(`serve did not start: ${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const { stdout } = await promisify(execFile)(
        "sh",
        ["-c", curl!.replace("localhost:8000", `localhost:${port}`)],
        {
          cwd: ROOT,
        },
      );
      const answer = JSON.parse(stdout) as {
        object: string;
        model: string;
        choices: { message: Record<string, string>; finish_reason: string }[];
      };
      expect(answer.object).toBe("chat.completion");
      expect(answer.model).toBe("qwen3-mock");
      // The mock engine echoes the rendered prompt; shown without special tokens, up to Qwen3's EOS.
      expect(answer.choices[0]!.message).toMatchObject({ role: "assistant", content: "user\nHello!" });
      expect(answer.choices[0]!.finish_reason).toBe("stop");
    } finally {
      process.kill(-child.pid!, "SIGINT");
      const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
      clearInterval(sampler);
    }
    expect(seen.size, "serve and its mock engine ran below the shell").toBeGreaterThanOrEqual(2);
    let left = [...seen].filter(isAlive);
    for (let i = 0; i < 40 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = left.filter(isAlive);
    }
    expect(left, output).toEqual([]);
    expect(output).toMatch(/interrupted by SIGINT; everything this command started was closed/);
  });
});
