// Worker side of a consumer thread (neither the connecting thread nor the runtime): marks this thread's
// event loop for /proc, attaches to the connection with EngineCoreClient.attach(handle) and hands every
// other message to the tool's `run`; errors go back as `{ type: "error" }`. It never loads zeromq.
import { parentPort } from "node:worker_threads";
import { EngineCoreClient } from "@vllm-engine-core/client";
import { createThreadMarker } from "../net.js";
import type { ConsumerControl, ConsumerNotice } from "./protocol.js";

export interface ConsumerContext<From> {
  /** The client attached to the main thread's connection. */
  client: EngineCoreClient;
  post(message: From | ConsumerNotice, transfer?: ArrayBuffer[]): void;
}

/** Serves the calling worker's parent port; `run` gets the tool's messages once the client is attached. */
export async function serveConsumer<To extends { type: string }, From extends { type: string }>(
  run: (message: To, context: ConsumerContext<From>) => Promise<void>,
): Promise<void> {
  if (parentPort === null) throw new Error("a consumer worker must run as a worker thread");
  const port = parentPort;
  const post = (message: From | ConsumerNotice, transfer: ArrayBuffer[] = []) =>
    port.postMessage(message, transfer);
  const marker = await createThreadMarker();
  let client: EngineCoreClient | undefined;

  const handle = async (message: To | ConsumerControl): Promise<void> => {
    if (message.type === "attach") {
      client = await EngineCoreClient.attach(
        (message as Extract<ConsumerControl, { type: "attach" }>).handle,
      );
      post({ type: "attached" });
    } else if (message.type === "close") {
      await client?.detach();
      await marker?.close();
      post({ type: "closed" });
      port.close();
    } else {
      if (client === undefined) throw new Error(`${message.type} before attach`);
      await run(message as To, { client, post });
    }
  };
  port.on("message", (message: To | ConsumerControl) => {
    handle(message).catch((error: unknown) => {
      const e = error instanceof Error ? error : new Error(String(error));
      post({ type: "error", message: `${e.name}: ${e.message}`, stack: e.stack });
    });
  });
  post({ type: "marker", fd: marker?.fd });
}
