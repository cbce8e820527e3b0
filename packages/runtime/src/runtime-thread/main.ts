// The runtime worker entry (bundled to dist/runtime-thread/main.js with the transport and protocol inlined,
// zeromq external). The only module of this package that calls the transport.
import { connectTransport } from "@vllm-engine-core/transport";
import { RuntimeService } from "./runtime.js";

// The config was resolved (validated, defaulted) on the thread that opened the connection.
new RuntimeService((config, signal) => connectTransport(config, { signal }));
