// Starting the mock engine the way the probe and the bench need it: TCP handshake on loopback, wall-clock
// timestamps with sub-millisecond precision, limits high enough for long and many streams.
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";

/**
 * The mock stamps EngineCoreOutputs.timestamp with `Date.now() / 1000` ("wall" mode), which has 1 ms
 * resolution — too coarse for sub-millisecond delays. This preload (our own file, loaded only into the
 * mock-engine child) makes Date.now() return `performance.timeOrigin + performance.now()`: the same
 * instant, with microsecond resolution. A mock that already stamps with a precise clock is unaffected.
 */
export function preciseClockPreload(): string {
  // Plain JS outside src/ so it works from dist/ and from sources alike.
  return new URL("../preload/precise-clock.mjs", import.meta.url).href;
}

export interface ProbeEngineOptions {
  handshakeAddress: string;
  stepMs: number;
  /** Max concurrently running requests of the mock scheduler (default 256 in the mock). */
  maxNumSeqs?: number;
  engineIndices?: number[];
  extra?: Partial<MockEngineOptions>;
}

export function startProbeEngine(options: ProbeEngineOptions): Promise<MockEngineProcess> {
  // A file: URL has no spaces, so it needs no quoting inside NODE_OPTIONS.
  const nodeOptions = [process.env.NODE_OPTIONS ?? "", `--import=${preciseClockPreload()}`].join(" ").trim();
  return startMockEngine({
    handshakeAddress: options.handshakeAddress,
    engineIndices: options.engineIndices ?? [0],
    stepMs: options.stepMs,
    timestamps: "wall",
    readyResponse: { maxModelLen: 1 << 24, maxNumSeqs: options.maxNumSeqs ?? 16_384 },
    ...options.extra,
    env: { NODE_OPTIONS: nodeOptions, ...(options.extra?.env ?? {}) },
  });
}
