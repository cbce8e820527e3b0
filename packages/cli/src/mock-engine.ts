// Access to the mock engine (tools/mock-engine) from the CLI. The mock engine is a private workspace package, so
// the build bundles it into dist/mock-engine/ (scripts/bundle-mock-engine.mjs) and the CLI loads that copy at
// run time: the published package then needs no unpublished dependency. Only types come from the workspace.
import { createServer } from "node:net";
import type * as MockEngine from "@vllm-engine-core/mock-engine";
import { CliRuntimeError } from "./errors.js";
import type { Cleanup } from "./lifecycle.js";

export type MockEngineModule = typeof MockEngine;
export type MockEngineProcess = MockEngine.MockEngineProcess;
export type MockEngineEvent = MockEngine.MockEngineEvent;

/** dist/mock-engine/index.js, next to this module's dist/ directory. */
const BUNDLE_URL = new URL("./mock-engine/index.js", import.meta.url);

export async function loadMockEngine(): Promise<MockEngineModule> {
  try {
    return (await import(BUNDLE_URL.href)) as MockEngineModule;
  } catch (error) {
    throw new CliRuntimeError(
      `the bundled mock engine (${BUNDLE_URL.pathname}) cannot be loaded: ${(error as Error).message}. ` +
        "Rebuild the CLI (pnpm --filter @vllm-engine-core/cli build) or reinstall the package",
    );
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Stops a mock engine that is starting or started: registered before its start is awaited, so that Ctrl-C
 * during the start still stops the child once it is up (it also dies with this process: IPC disconnect).
 */
export function mockCleanup(starting: Promise<MockEngineProcess>): Cleanup {
  let started: MockEngineProcess | undefined;
  starting.then(
    (engine) => {
      started = engine;
    },
    () => {},
  );
  return {
    close: async () => {
      const engine = await starting.catch(() => undefined);
      await engine?.stop();
    },
    force: () => started?.kill("SIGKILL"),
  };
}
