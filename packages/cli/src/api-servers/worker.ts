// One further API server of `serve --api-server-count N`, on its own worker thread: it attaches to the main
// thread's connection (the runtime thread keeps every engine socket; this thread loads no zeromq), loads its
// own tokenizer, and listens on the main server's port with SO_REUSEPORT, so the kernel spreads incoming
// connections over the servers. It closes when the main thread says so, or when the main thread is gone.
import { parentPort, workerData } from "node:worker_threads";
import { EngineCoreClient } from "@vllm-engine-core/client";
import { createServer } from "@vllm-engine-core/server";
import { Tokenizer } from "@vllm-engine-core/text";
import type { ApiServerData, FromApiServer, ToApiServer } from "./messages.js";

const data = workerData as ApiServerData;
const port = parentPort!;
const send = (message: FromApiServer) => port.postMessage(message);

// /metrics on this server: the main thread combines every server's snapshot (this one's included).
let nextId = 0;
const expositions = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
const metricsAcrossServers = {
  exposition: () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      expositions.set(id, { resolve, reject });
      send({ kind: "exposition", id });
    }),
};

const client = await EngineCoreClient.attach(data.handle, { structuredOutputs: data.structuredOutputs });
const app = createServer({
  ...data.server,
  client,
  tokenizer: Tokenizer.fromDirectory(data.tokenizerDir, data.tokenizerOptions),
  // The main thread's server loaded them on the engines before this one started.
  loadLoraModules: false,
  metricsAcrossServers,
});

let closing: Promise<void> | undefined;
// Assigned below, before any message can arrive: a close that comes while listen() is in flight waits for
// it, so the server never starts listening after it was closed.
let listening: Promise<unknown> = Promise.resolve();
const close = () => {
  closing ??= (async () => {
    try {
      await listening.catch(() => {});
      // Cuts open streams (forceCloseConnections): each aborts its request on the engine.
      await app.close();
    } finally {
      await client.detach();
      send({ kind: "closed" });
      port.close();
    }
  })();
  return closing;
};

port.on("message", (message: ToApiServer) => {
  switch (message.kind) {
    case "snapshot": {
      const snapshot = app.metricsSnapshot;
      if (snapshot === undefined) {
        send({ kind: "snapshot", id: message.id, snapshot: [] });
        return;
      }
      snapshot().then(
        (value) => send({ kind: "snapshot", id: message.id, snapshot: value }),
        (error: Error) => send({ kind: "snapshot", id: message.id, error: error.message }),
      );
      return;
    }
    case "exposition": {
      const waiter = expositions.get(message.id);
      expositions.delete(message.id);
      if (message.text !== undefined) waiter?.resolve(message.text);
      else waiter?.reject(new Error(message.error ?? "the main thread gave no metrics"));
      return;
    }
    case "close":
      void close();
      return;
  }
});
// The main thread exited without a word (a forced exit): nothing is left to serve for, and no scrape
// waiting on it is ever answered.
port.on("close", () => {
  for (const waiter of expositions.values()) waiter.reject(new Error("the main thread is gone"));
  expositions.clear();
  void close();
});

// Node ≥ 22.12: several listeners on one port (SO_REUSEPORT); serve checks the version before starting us.
listening = app.listen({ host: data.host, port: data.port, reusePort: true } as {
  host: string;
  port: number;
});
await listening;
if (closing === undefined) send({ kind: "listening" });
