// The launchers' errors (engine and coordinator alike): one module so that the shared child spawner can
// throw them without importing a launcher.
abstract class MockEngineError extends Error {
  abstract readonly code: string;
}

/** dist/main.js does not exist: the package has not been built. */
export class MockEngineNotBuiltError extends MockEngineError {
  override readonly name = "MockEngineNotBuiltError";
  readonly code = "MOCK_ENGINE_NOT_BUILT";
  constructor(readonly path: string) {
    super(
      `The mock engine entry ${path} does not exist; build it first (pnpm --filter @vllm-engine-core/mock-engine build)`,
    );
  }
}

/** The child exited before it reported `started` (bad flags, missing dependency, ...). */
export class MockEngineStartError extends MockEngineError {
  override readonly name = "MockEngineStartError";
  readonly code = "MOCK_ENGINE_START";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderr: string,
  ) {
    super(
      `The mock engine exited before it started (code ${exitCode}, signal ${signal}): ${stderr.trim() || "no stderr"}`,
    );
  }
}

/** waitForEvent gave up: no matching event within the timeout. */
export class MockEngineTimeoutError extends MockEngineError {
  override readonly name = "MockEngineTimeoutError";
  readonly code = "MOCK_ENGINE_TIMEOUT";
  constructor(
    readonly timeoutMs: number,
    lastEvents: readonly unknown[],
  ) {
    super(
      `No matching mock-engine event within ${timeoutMs} ms; check the predicate or raise the timeout. ` +
        `Last events: ${lastEvents.map((e) => JSON.stringify(e)).join(" ")}`,
    );
  }
}

/** waitForEvent: the child exited without ever logging a matching event. */
export class MockEngineExitedError extends MockEngineError {
  override readonly name = "MockEngineExitedError";
  readonly code = "MOCK_ENGINE_EXITED";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`The mock engine exited (code ${exitCode}, signal ${signal}) without a matching event`);
  }
}
