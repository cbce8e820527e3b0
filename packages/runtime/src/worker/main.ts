// The runtime worker entry (bundled to dist/worker/main.js with the transport and protocol inlined,
// zeromq external). The only module of this package that imports the transport.
import { connectTransport } from "@vllm-engine-core/transport";
import type { EngineIO } from "./engine-io.js";
import { RuntimeService } from "./runtime.js";

new RuntimeService(async (config, signal): Promise<EngineIO> => {
  return connectTransport(config.transport, {
    signal,
    ...(config.clientIndex !== undefined ? { clientIndex: config.clientIndex } : {}),
    ...(config.coordinator !== undefined ? { coordinator: config.coordinator } : {}),
  });
});
