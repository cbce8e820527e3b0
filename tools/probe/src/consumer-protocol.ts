// Messages between the probe's main thread and its consumer worker (the third thread).
import type { ClientHandle } from "@vllm-engine-core/client";

export type ToConsumer =
  | { type: "attach"; handle: ClientHandle }
  | { type: "start"; count: number; maxTokens: number; prefix: string; tokensPerStep: number }
  | { type: "stop" }
  | { type: "close" };

export type FromConsumer =
  | { type: "marker"; fd: number | undefined }
  | { type: "attached" }
  | { type: "flowing" }
  | { type: "stopped"; pairs: Float64Array; merged: number }
  | { type: "closed" }
  | { type: "error"; message: string; stack: string | undefined };
