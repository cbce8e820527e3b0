// Starting the mock engine the way the probe and the bench need it: TCP handshake on loopback, send
// timestamps on CLOCK_MONOTONIC (the clock readers compare them with: clock.ts), limits high enough for long
// and many streams.
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";

export interface ProbeEngineOptions {
  handshakeAddress: string;
  stepMs: number;
  /** Max concurrently running requests of the mock scheduler (default 256 in the mock). */
  maxNumSeqs?: number;
  engineIndices?: number[];
  extra?: Partial<MockEngineOptions>;
}

export function startProbeEngine(options: ProbeEngineOptions): Promise<MockEngineProcess> {
  return startMockEngine({
    handshakeAddress: options.handshakeAddress,
    engineIndices: options.engineIndices ?? [0],
    stepMs: options.stepMs,
    timestamps: "monotonic-at-send",
    readyResponse: { maxModelLen: 1 << 24, maxNumSeqs: options.maxNumSeqs ?? 16_384 },
    ...options.extra,
  });
}
