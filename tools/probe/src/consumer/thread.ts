// Main-thread side of a consumer worker: starts the tool's worker script, connects the product client (all
// sockets on the runtime thread) and attaches the worker to it with the client's handle.
import { Worker } from "node:worker_threads";
import { EngineCoreClient } from "@vllm-engine-core/client";
import { WorkerMailbox } from "./mailbox.js";
import type { ConsumerControl, ConsumerNotice } from "./protocol.js";

/** A tool's consumer worker (its script calls serveConsumer), with typed waits for its messages. */
export class ConsumerThread<From extends { type: string }, To extends { type: string }> extends WorkerMailbox<
  From | ConsumerNotice,
  To | ConsumerControl
> {
  /**
   * `intercept` sees every message first; returning true keeps it out of the inbox. `execArgv` replaces
   * the Node flags the worker would inherit (tests pass [] to leave the test runner's behind).
   */
  constructor(
    workerScript: URL,
    options: { intercept?: (m: From | ConsumerNotice) => boolean; execArgv?: string[] } = {},
  ) {
    const { intercept, execArgv } = options;
    super(new Worker(workerScript, execArgv === undefined ? {} : { execArgv }), intercept);
  }

  /** The same mailbox seen through the messages every consumer worker shares. */
  get control(): WorkerMailbox<ConsumerNotice, ConsumerControl> {
    return this as WorkerMailbox<ConsumerNotice, ConsumerControl>;
  }
}

export interface AttachedConsumer {
  client: EngineCoreClient;
  /** The consumer thread's marker descriptor (undefined where /proc is unavailable). */
  markerFd: number | undefined;
}

export interface AttachOptions<C> {
  /** Started after the engine, so that a failed engine start leaves no worker behind. */
  consumer: C;
  engine: { handshakeAddress: string; stop(): Promise<void> };
  /** Runs once the client is connected, before the consumer attaches (and before it touches the client). */
  beforeAttach?: (attached: AttachedConsumer) => void;
}

/**
 * Connects the product client as the handshake owner of `engine`, attaches `consumer` to it and runs
 * `use`; then closes the consumer, shuts the client down and stops the engine, also when anything failed.
 */
export async function withAttachedConsumer<From extends { type: string }, To extends { type: string }, T>(
  { consumer, engine, beforeAttach }: AttachOptions<ConsumerThread<From, To>>,
  use: (attached: AttachedConsumer) => Promise<T>,
): Promise<T> {
  let client: EngineCoreClient | undefined;
  try {
    const { fd: markerFd } = await consumer.control.expect("marker");
    client = await EngineCoreClient.connect({
      transport: {
        mode: "handshake-owner",
        handshakeAddress: engine.handshakeAddress,
        readyTimeoutMs: 20_000,
      },
    });
    beforeAttach?.({ client, markerFd });
    consumer.control.send({ type: "attach", handle: client.handle });
    await consumer.control.expect("attached");
    return await use({ client, markerFd });
  } finally {
    await consumer.close();
    await client?.shutdown();
    await engine.stop();
  }
}
