// The process-group runner, with a shell script standing in for vLLM.
import { describe, expect, it } from "vitest";
import { RealEngineExitedError, RealEngineLogTimeoutError } from "../../src/index.ts";
import { spawnVllmProcess } from "../../src/process.ts";

const sh = (script: string) => spawnVllmProcess("/bin/sh", ["-c", script], process.env);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("spawnVllmProcess", () => {
  it("keeps stdout and stderr lines and finds past and future lines", async () => {
    const p = sh(
      "echo first; echo 'to stderr' >&2; read _ </dev/null; sleep 0.2; echo 'engine ready'; sleep 30",
    );
    try {
      await expect(p.waitForLog(/engine ready/, 10_000)).resolves.toBe("engine ready");
      await expect(p.waitForLog(/^first$/, 10)).resolves.toBe("first");
      expect(p.logLines).toContain("to stderr");
    } finally {
      await p.stop();
    }
  });

  it("bounds waitForLog and says what it waited for", async () => {
    const p = sh("echo something; sleep 30");
    try {
      const error = await p.waitForLog(/never/, 200).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RealEngineLogTimeoutError);
      expect((error as RealEngineLogTimeoutError).code).toBe("REAL_ENGINE_LOG_TIMEOUT");
      expect((error as Error).message).toContain("something");
    } finally {
      await p.stop();
    }
  });

  it("rejects a pending wait when the process exits, with its exit code and log", async () => {
    const p = sh("echo 'bad flag' >&2; exit 3");
    const error = await p.waitForLog(/never/, 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RealEngineExitedError);
    expect((error as RealEngineExitedError).exitCode).toBe(3);
    expect((error as Error).message).toContain("bad flag");
    await expect(p.exited).resolves.toEqual({ code: 3, signal: null });
  });

  it("stop() kills the whole group, escalating to SIGKILL when SIGTERM is ignored", async () => {
    // A child that ignores SIGTERM, and a grandchild (sleep) in the same group.
    const p = sh("trap '' TERM; sleep 60 & echo \"grandchild $!\"; wait");
    const line = await p.waitForLog(/^grandchild \d+$/, 10_000);
    const grandchild = Number(line.split(" ")[1]);
    const started = Date.now();
    const info = await p.stop(300);
    expect(info.signal).toBe("SIGKILL");
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect.poll(() => alive(grandchild), { timeout: 5_000 }).toBe(false);
    await expect(p.stop()).resolves.toEqual(info); // idempotent
  });

  it("stop() returns at once after SIGTERM when the process honours it", async () => {
    const p = sh("echo up; sleep 60");
    await p.waitForLog(/up/, 10_000);
    const info = await p.stop(20_000);
    expect(info.signal).toBe("SIGTERM");
  });
});

describe("a Node process that exits without stop()", () => {
  it("takes its vLLM process groups with it", async () => {
    const { spawnSync } = await import("node:child_process");
    const { fileURLToPath } = await import("node:url");
    // The built module (the test task builds first): plain Node, no tsx cache left in the guarded TMPDIR.
    const processTs = fileURLToPath(new URL("../../dist/process.js", import.meta.url));
    // A child Node process starts a group (sh + a sleeping grandchild), prints the grandchild's pid, exits.
    const script = `
      import { spawnVllmProcess } from ${JSON.stringify(processTs)};
      const p = spawnVllmProcess("/bin/sh", ["-c", "sleep 60 & echo $!; wait"], process.env);
      const line = await p.waitForLog(/^\\d+$/, 10000);
      console.log(line);
      process.exit(0);
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 30_000,
    });
    const grandchild = Number(r.stdout.trim().split("\n").pop());
    expect(grandchild, r.stderr).toBeGreaterThan(0);
    await expect.poll(() => alive(grandchild), { timeout: 5_000 }).toBe(false);
  });
});

describe("a Node process ended by SIGTERM", () => {
  it("takes its vLLM process groups with it and still dies of the signal", async () => {
    const { spawn } = await import("node:child_process");
    const { fileURLToPath } = await import("node:url");
    // The built module (the test task builds first): plain Node, no tsx cache left in the guarded TMPDIR.
    const processTs = fileURLToPath(new URL("../../dist/process.js", import.meta.url));
    // A child Node process starts a group (sh + a sleeping grandchild), prints the grandchild's pid, waits.
    const script = `
      import { spawnVllmProcess } from ${JSON.stringify(processTs)};
      const p = spawnVllmProcess("/bin/sh", ["-c", "sleep 60 & echo $!; wait"], process.env);
      console.log(await p.waitForLog(/^\\d+$/, 10000));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const grandchild = await new Promise<number>((resolve) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d;
        const pid = Number(out.trim().split("\n").pop());
        if (pid > 0) resolve(pid);
      });
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, s) => resolve(s)),
    );
    expect(alive(grandchild)).toBe(true);
    child.kill("SIGTERM");
    expect(await exited).toBe("SIGTERM");
    await expect.poll(() => alive(grandchild), { timeout: 5_000 }).toBe(false);
  });
});
