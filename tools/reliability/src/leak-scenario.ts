// The leak scenario (priority 5), run in a child `node --expose-gc` process (dist/leak-child.mjs) so that
// /proc/self/fd, /proc/self/task and the heap belong to this scenario alone:
//   A. connects aborted with an AbortSignal at random stages (already aborted, during runtime start, while
//      waiting for HELLO with no engine, after HELLO, waiting for READY, waiting for the registration, or
//      at a random moment against a live engine), with and without another connection keeping the runtime;
//   B. streams opened and dropped (break after the first output, return() before reading, AbortSignal,
//      abort(), never read at all), each registered in a FinalizationRegistry to prove it is collected;
//   C. utility calls all in flight at once.
// Resources are sampled after a warm-up (baseline) and once everything is closed and the runtime retired.

import { rmSync } from "node:fs";
import { EngineCoreClient, type EngineCoreOutputStream } from "@vllm-engine-core/client";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { chatRequest, ipcAddress, ipcPath, sleep, waitForIdleEngines, withTimeout } from "./harness.js";
import { between, pick, type Random, runLimited, seededRandom } from "./random.js";
import { type ResourceSample, sample, settleHeap } from "./resources.js";

export interface LeakOptions {
  /** Total aborted connects (part A). */
  connects: number;
  /** Of those, run sequentially with no other connection open (each may start and retire a runtime). */
  connectsWithoutKeeper: number;
  /** Of those, run against a freshly started mock-engine process (the expensive ones). */
  connectsWithEngine: number;
  /** Streams opened and dropped (part B). */
  streams: number;
  /** Utility calls in flight at once (part C). */
  utilities: number;
  seed: number;
  log?: (line: string) => void;
}

export interface LeakReport {
  seed: number;
  options: Omit<LeakOptions, "log" | "seed">;
  before: ResourceSample;
  /** Sampled while the keeper connection was open, after parts A (keeper), B and C. */
  during: ResourceSample;
  after: ResourceSample;
  connectKinds: Record<string, { attempts: number; aborted: number; completed: number }>;
  streamModes: Record<string, number>;
  /** Streams (of part B) whose objects were garbage-collected by the end. */
  streamsCollected: number;
  utilitiesOk: number;
  /** Anything unexpected: wrong rejection, wrong result, missing tokens. Must be empty. */
  errors: string[];
  durationsMs: Record<string, number>;
}

const IPC_PREFIX = "vec-rel-leak-";
const ENGINE_LESS_KINDS = ["pre-aborted", "during-start", "waiting-hello"] as const;
const ENGINE_KINDS = ["after-hello", "waiting-ready", "waiting-registration", "random-moment"] as const;
const STREAM_MODES = [
  "break-after-first",
  "return-before-read",
  "signal",
  "abort-call",
  "never-read",
] as const;

class AbortReason extends Error {
  override readonly name = "LeakTestAbort";
}

export async function runLeakScenario(options: LeakOptions): Promise<LeakReport> {
  const log = options.log ?? (() => {});
  const random = seededRandom(options.seed);
  const errors: string[] = [];
  const connectKinds: LeakReport["connectKinds"] = {};
  const streamModes: Record<string, number> = {};
  const durationsMs: Record<string, number> = {};
  const timed = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await run();
    } finally {
      durationsMs[name] = Math.round(performance.now() - started);
      log(`${name}: ${durationsMs[name]} ms`);
    }
  };

  // Warm-up: one full cycle of everything, so lazily created threads, pools and caches exist in the baseline.
  await timed("warm-up", async () => {
    const warm = await openKeeper();
    await streamPhase(warm.client, 200, random, {}, [], undefined);
    await utilityPhase(warm.client, 50, []);
    await connectPhase(4, 2, 0, random, {}, []);
    await warm.close();
    await connectPhase(2, 2, 0, random, {}, []);
    await waitForQuietThreads();
  });
  const before = await sample(IPC_PREFIX);
  log(`before: ${JSON.stringify(before)}`);

  const collected = { count: 0 };
  const registry = new FinalizationRegistry<void>(() => {
    collected.count += 1;
  });

  // Everything that uses the keeper runs in its own function, so that nothing it allocated (the mock
  // engine's event log, streams, closures) is still reachable from here when the final sample is taken.
  const { utilitiesOk, during } = await keeperPhases(options, random, timed, {
    connectKinds,
    streamModes,
    errors,
    registry,
  });
  await timed("A: aborted connects (no keeper, runtime may retire in between)", () =>
    connectPhase(options.connectsWithoutKeeper, 1, 0, random, connectKinds, errors),
  );
  await timed("quiet", waitForQuietThreads);
  await settleHeap();
  await sleep(50);
  const after = await sample(IPC_PREFIX);
  log(`after: ${JSON.stringify(after)}`);
  return {
    seed: options.seed,
    options: {
      connects: options.connects,
      connectsWithoutKeeper: options.connectsWithoutKeeper,
      connectsWithEngine: options.connectsWithEngine,
      streams: options.streams,
      utilities: options.utilities,
    },
    before,
    during,
    after,
    connectKinds,
    streamModes,
    streamsCollected: collected.count,
    utilitiesOk,
    errors,
    durationsMs,
  };
}

async function keeperPhases(
  options: LeakOptions,
  random: Random,
  timed: <T>(name: string, run: () => Promise<T>) => Promise<T>,
  sinks: {
    connectKinds: LeakReport["connectKinds"];
    streamModes: Record<string, number>;
    errors: string[];
    registry: FinalizationRegistry<void>;
  },
): Promise<{ utilitiesOk: number; during: ResourceSample }> {
  const keeper = await timed("keeper connect", openKeeper);
  try {
    const withKeeper = options.connects - options.connectsWithoutKeeper;
    await timed("A: aborted connects (keeper open)", () =>
      connectPhase(withKeeper, 8, options.connectsWithEngine, random, sinks.connectKinds, sinks.errors),
    );
    await timed("B: streams opened and dropped", () =>
      streamPhase(keeper.client, options.streams, random, sinks.streamModes, sinks.errors, sinks.registry),
    );
    // Every dropped request was aborted (or finished) on the engines too.
    if (!(await timed("B: engines idle", () => waitForIdleEngines(keeper.client)))) {
      sinks.errors.push("the engines still run some of the dropped requests 10 s after part B");
    }
    const utilitiesOk = await timed("C: utility calls in flight at once", () =>
      utilityPhase(keeper.client, options.utilities, sinks.errors),
    );
    return { utilitiesOk, during: await sample(IPC_PREFIX) };
  } finally {
    await timed("keeper shutdown", () => keeper.close());
  }
}

/** A two-engine mock process plus a connected client: the connection that keeps the runtime alive. */
async function openKeeper(): Promise<{ client: EngineCoreClient; close(): Promise<void> }> {
  const handshakeAddress = ipcAddress("leak-keeper");
  const engine = await startMockEngine({ handshakeAddress, engineIndices: [0, 1], stepMs: 1 });
  try {
    const client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, engineCount: 2, readyTimeoutMs: 20_000 },
    });
    return {
      client,
      async close() {
        await client.shutdown();
        await engine.stop();
      },
    };
  } catch (error) {
    await engine.stop();
    throw error;
  }
}

/**
 * Polls /proc/self/task until the thread count has not changed for 3.5 s, at most 20 s: an idle runtime
 * retires at once after its last connection closes, but one started for a connect that never got going
 * waits 3 s before it retires (runtime README).
 */
export async function waitForQuietThreads(): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const { threads } = await sample(IPC_PREFIX);
    if (threads !== last) {
      last = threads;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 3_500) {
      return;
    }
    await sleep(100);
  }
}

// ---- A: aborted connects --------------------------------------------------------------------------------

async function connectPhase(
  count: number,
  concurrency: number,
  withEngine: number,
  random: Random,
  kinds: LeakReport["connectKinds"],
  errors: string[],
): Promise<void> {
  // Engine-backed attempts are spread over the run; each gets its own mock-engine process.
  const engineSlots = new Set<number>();
  while (engineSlots.size < Math.min(withEngine, count)) engineSlots.add(Math.floor(random() * count));
  await runLimited(count, concurrency, async (i) => {
    const kind = engineSlots.has(i) ? pick(random, ENGINE_KINDS) : pick(random, ENGINE_LESS_KINDS);
    kinds[kind] ??= { attempts: 0, aborted: 0, completed: 0 };
    const entry = kinds[kind];
    entry.attempts += 1;
    try {
      const outcome = await abortedConnect(kind, random);
      entry[outcome] += 1;
    } catch (error) {
      errors.push(`connect (${kind}): ${describe(error)}`);
    }
  });
}

async function abortedConnect(
  kind: (typeof ENGINE_LESS_KINDS)[number] | (typeof ENGINE_KINDS)[number],
  random: Random,
): Promise<"aborted" | "completed"> {
  // Not remembered by the harness (that set would grow with every attempt and count as a leak here); the
  // file is removed right after the attempt instead.
  const path = ipcPath("leak-connect");
  const handshakeAddress = `ipc://${path}`;
  const controller = new AbortController();
  const reason = new AbortReason(`aborted on purpose (${kind})`);
  let engine: MockEngineProcess | undefined;
  if (kind === "pre-aborted") controller.abort(reason);
  if ((ENGINE_KINDS as readonly string[]).includes(kind)) {
    engine = await startMockEngine({
      handshakeAddress,
      engineIndices: [0],
      stepMs: 2,
      // "after-hello" aborts the moment the test has read the engine's HELLO event; a healthy engine would
      // go on with the handshake meanwhile and could win that race, so it never sends READY either.
      ...(kind === "waiting-ready" || kind === "after-hello" ? { faults: { noReady: true } } : {}),
      ...(kind === "waiting-registration" ? { faults: { noRegistration: true } } : {}),
    });
  }
  try {
    const pending = EngineCoreClient.connect(
      { transport: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 } },
      { signal: controller.signal },
    );
    const settled = pending.then(
      (client) => ({ client }) as const,
      (error: unknown) => ({ error }) as const,
    );
    switch (kind) {
      case "pre-aborted":
        break;
      case "during-start":
        queueMicrotask(() => controller.abort(reason));
        break;
      case "waiting-hello":
        await sleep(between(random, 0, 40));
        controller.abort(reason);
        break;
      case "after-hello":
        await engine!.waitForEvent((e) => e.event === "hello", 15_000);
        controller.abort(reason);
        break;
      case "waiting-ready":
      case "waiting-registration":
        await engine!.waitForEvent((e) => e.event === "init", 15_000);
        await sleep(between(random, 0, 30));
        controller.abort(reason);
        break;
      case "random-moment":
        await sleep(between(random, 0, 60));
        controller.abort(reason);
        break;
    }
    const result = await withTimeout(settled, 20_000, `aborted connect (${kind}) to settle`);
    if ("client" in result) {
      await result.client.shutdown();
      if (kind !== "random-moment") throw new Error(`connect (${kind}) completed although it was aborted`);
      return "completed";
    }
    if (result.error !== reason) throw result.error;
    return "aborted";
  } finally {
    await engine?.stop();
    rmSync(path, { force: true });
  }
}

// ---- B: streams opened and dropped ----------------------------------------------------------------------

async function streamPhase(
  client: EngineCoreClient,
  count: number,
  random: Random,
  modes: Record<string, number>,
  errors: string[],
  registry: FinalizationRegistry<void> | undefined,
): Promise<void> {
  const round = Math.floor(random() * 1e9).toString(36);
  await runLimited(count, 128, async (i) => {
    const mode = pick(random, STREAM_MODES);
    modes[mode] = (modes[mode] ?? 0) + 1;
    const requestId = `s-${round}-${i}`;
    try {
      await openAndDrop(client, requestId, mode, random, registry);
    } catch (error) {
      errors.push(`stream ${requestId} (${mode}): ${describe(error)}`);
    }
  });
}

async function openAndDrop(
  client: EngineCoreClient,
  requestId: string,
  mode: (typeof STREAM_MODES)[number],
  random: Random,
  registry: FinalizationRegistry<void> | undefined,
): Promise<void> {
  const register = (stream: EngineCoreOutputStream) => registry?.register(stream, undefined);
  switch (mode) {
    case "break-after-first": {
      const stream = await client.call(chatRequest(requestId, 1_000));
      register(stream);
      for await (const _ of stream) break;
      return;
    }
    case "return-before-read": {
      const stream = await client.call(chatRequest(requestId, 1_000));
      register(stream);
      await stream.return();
      return;
    }
    case "signal": {
      const controller = new AbortController();
      const reason = new AbortReason("stream dropped by signal");
      const stream = await client.call(chatRequest(requestId, 1_000), { signal: controller.signal });
      register(stream);
      setTimeout(() => controller.abort(reason), between(random, 0, 5));
      try {
        for await (const _ of stream) {
          // read until the signal ends the stream
        }
        throw new Error("the stream finished although its signal was aborted");
      } catch (error) {
        if (error !== reason) throw error;
      }
      return;
    }
    case "abort-call": {
      const stream = await client.call(chatRequest(requestId, 1_000));
      register(stream);
      await stream.next();
      await client.abort(requestId);
      return;
    }
    case "never-read": {
      // Short request: it finishes on the engine with nobody reading; the caller just lets go of it.
      register(await client.call(chatRequest(requestId, 2)));
      return;
    }
  }
}

// ---- C: utility calls ------------------------------------------------------------------------------------

async function utilityPhase(client: EngineCoreClient, count: number, errors: string[]): Promise<number> {
  const results = await Promise.allSettled(
    Array.from({ length: count }, (_, i) => client.callUtility<unknown[]>("echo", [i, `u${i}`])),
  );
  let ok = 0;
  results.forEach((result, i) => {
    if (result.status === "rejected") {
      errors.push(`utility ${i}: ${describe(result.reason)}`);
      return;
    }
    const expected = JSON.stringify([i, `u${i}`]);
    if (
      result.value.length !== client.engineCount ||
      result.value.some((v) => JSON.stringify(v) !== expected)
    ) {
      errors.push(`utility ${i}: wrong result ${JSON.stringify(result.value)}`);
      return;
    }
    ok += 1;
  });
  return ok;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
