// Bad flags, unreachable addresses and handshake timeouts: one line on stderr naming what is wrong and what to
// do, exit 2 (usage) or 1 (runtime), no stack trace unless --verbose.
import { describe, expect, test } from "vitest";
import { errorLines, freePort, holdPort, runCli } from "./helpers.js";

function oneLine(stderr: string): string {
  const lines = errorLines(stderr);
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe.concurrent("usage errors exit 2 with one line", () => {
  test.each([
    [["info", "--mock", "--bogus"], /Unknown option '--bogus'\. Run `vllm-engine-core info --help`/],
    [["frobnicate"], /unknown command "frobnicate" \(commands: info, generate, /],
    [["info"], /no engines to talk to: give --handshake-address tcp:\/\/H:P/],
    [
      ["info", "--mock", "--handshake-address", "tcp://127.0.0.1:1"],
      /choose one of --handshake-address and --mock/,
    ],
    [
      ["info", "--data-parallel-address", "127.0.0.1"],
      /--data-parallel-address and --data-parallel-rpc-port go together/,
    ],
    [["info", "--mock", "--engine-count", "2", "--data-parallel-size", "3"], /disagree/],
    [
      ["info", "--handshake-address", "localhost:29550"],
      /INVALID_CONFIG: .*transport\.handshakeAddress.*tcp:\/\/127\.0\.0\.1:29550/,
    ],
    [["info", "--input-address", "tcp://127.0.0.1:1"], /needs both --input-address and --output-address/],
    [
      ["info", "--mock-step-ms", "3", "--handshake-address", "tcp://127.0.0.1:1"],
      /--mock-step-ms only applies with --mock/,
    ],
    [["generate", "--mock"], /`generate` needs --prompt-token-ids/],
    [
      ["generate", "--mock", "--prompt-token-ids", "1,x"],
      /--prompt-token-ids needs comma-separated non-negative integer token ids/,
    ],
    [
      ["generate", "--mock", "--prompt-token-ids", "1", "--top-p", "2"],
      /--top-p needs a number in \(0, 1\], got "2"/,
    ],
    [
      ["generate", "--mock", "--prompt-token-ids", "1", "--max-tokens", "0"],
      /--max-tokens needs an integer >= 1/,
    ],
    [["utility", "--mock"], /`utility` needs <method> \[json-args\]/],
    [["utility", "echo", "{nope", "--mock"], /json-args is not JSON/],
    [["profile", "begin", "--mock"], /`profile` needs start or stop, got "begin"/],
    [["sleep", "--mode", "later", "--mock"], /--mode must be one of abort, wait, keep/],
    [["bench", "--mock", "--request-rate=-1"], /--request-rate needs a positive number or inf/],
    // A negative number is the flag's value, as in vLLM's argparse CLIs: the range check answers.
    [["bench", "--mock", "--request-rate", "-1"], /--request-rate needs a positive number or inf, got "-1"/],
    [["bench", "--mock", "--percentile-metrics", "ttft,foo"], /unknown metric "foo"/],
    [
      ["bench", "--mock", "--input-len", "5000", "--num-prompts", "1"],
      /do not fit the engines' max_model_len 4096/,
    ],
  ])("%j", async (args, message) => {
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(2);
    expect(oneLine(r.stderr)).toMatch(message);
    expect(r.leftRunning).toEqual([]);
  });
});

describe.concurrent("runtime errors exit 1 with one line", () => {
  test("an address that cannot be bound names the socket and the fix", async () => {
    const held = await holdPort();
    try {
      const r = await runCli(["info", "--handshake-address", `tcp://127.0.0.1:${held.port}`]);
      expect(r.code).toBe(1);
      const line = oneLine(r.stderr);
      expect(line).toMatch(/^vllm-engine-core: error: BIND_FAILED: Could not bind the handshake socket/);
      expect(line).toContain("--handshake-address");
    } finally {
      held.server.close();
    }
  });

  test("no engine dials in: handshake timeout after --ready-timeout-s, pointing at the flag", async () => {
    const port = await freePort();
    const started = Date.now();
    const r = await runCli([
      "info",
      "--handshake-address",
      `tcp://127.0.0.1:${port}`,
      "--ready-timeout-s",
      "0.5",
    ]);
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    const line = oneLine(r.stderr);
    expect(line).toMatch(/HANDSHAKE_TIMEOUT: Timed out after 500 ms waiting for a HELLO message/);
    expect(line).toContain("--ready-timeout-s");
  });

  test("--verbose adds the stack", async () => {
    const port = await freePort();
    const r = await runCli([
      "info",
      "--handshake-address",
      `tcp://127.0.0.1:${port}`,
      "--ready-timeout-s",
      "0.3",
      "--verbose",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HANDSHAKE_TIMEOUT/);
    expect(r.stderr).toMatch(/^\s+at /m);
  });
});

describe.concurrent("help", () => {
  test("no arguments: the command list, exit 2", async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^usage: vllm-engine-core <command> \[flags\]$/m);
  });

  test("--version prints the package version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
