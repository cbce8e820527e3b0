// The part of a consumer worker's protocol every tool shares: the main thread hands it the connection's
// handle and later closes it; the worker announces its thread marker, the attachment, the close and any
// failure. A tool's own messages (what to run, what came out) are added to these two unions.
import type { ClientHandle } from "@vllm-engine-core/client";

export type ConsumerControl = { type: "attach"; handle: ClientHandle } | { type: "close" };

export type ConsumerNotice =
  | { type: "marker"; fd: number | undefined }
  | { type: "attached" }
  | { type: "closed" }
  | { type: "error"; message: string; stack: string | undefined };
