// Engines of different vLLM versions behind one client: one mock engine process per engine, each
// announcing its own release in its registration (readyResponse).
import { startMockEngine } from "@vllm-engine-core/mock-engine";
import { EngineCoreClient } from "../src/index.js";
import { type Harness, ipcAddress } from "./helpers.js";

/** `versions[i]` is engine i's `vllm_version` (undefined: the mock's default, a main development build). */
export async function connectToMixedEngines(versions: readonly (string | undefined)[]): Promise<Harness> {
  const handshakeAddress = ipcAddress("hs-mixed");
  const engines = await Promise.all(
    versions.map((vllmVersion, index) =>
      startMockEngine({
        handshakeAddress,
        engineIndices: [index],
        stepMs: 2,
        surviveBadRequests: true,
        ...(vllmVersion === undefined ? {} : { readyResponse: { vllmVersion } }),
      }),
    ),
  );
  const stopAll = () => Promise.all(engines.map((e) => e.stop()));
  const client = await EngineCoreClient.connect({
    transport: {
      mode: "handshake-owner",
      handshakeAddress,
      engineCount: versions.length,
      readyTimeoutMs: 20_000,
    },
  }).catch(async (error: unknown) => {
    await stopAll();
    throw error;
  });
  return {
    client,
    engine: engines[0]!,
    handshakeAddress,
    async close() {
      await client.shutdown();
      await stopAll();
    },
  };
}
