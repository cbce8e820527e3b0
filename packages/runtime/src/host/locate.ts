// How a thread finds the runtime: the main thread asks its supervisor directly; a worker thread asks the
// main-thread host over the host channel and fails fast when nobody answers (the package was not imported
// on the main thread, so no thread can spawn a runtime that outlives this one).
import { deserializeError, RuntimeHostUnavailableError } from "@vllm-engine-core/errors";
import type { HostReply, HostRequest, RuntimeFate } from "../messages.js";
import { HOST_ACK_TIMEOUT_MS } from "../timing.js";
import { holdHostChannel, onHostMessage, postHostMessage } from "./host-channel.js";
import { newId } from "./ids.js";
import { mainThreadSupervisor } from "./supervisor.js";

export type RuntimeWhereabouts = { alive: true } | { alive: false; fate: RuntimeFate };

/** The generation of a runtime that accepts work, spawned on demand by the main-thread host. */
export async function ensureRuntime(signal?: AbortSignal): Promise<string> {
  signal?.throwIfAborted();
  const supervisor = mainThreadSupervisor();
  if (supervisor !== undefined) return withAbort(supervisor.ensure(), signal);
  const reply = await askHost({ t: "ensure", nonce: newId() }, signal);
  if (reply.t === "runtime") return reply.gen;
  if (reply.t === "unavailable") throw deserializeError(reply.error);
  throw new Error(`unexpected host reply ${reply.t} to ensure`);
}

/** Whether runtime generation `gen` still accepts work, or how it ended. */
export async function locateRuntime(gen: string): Promise<RuntimeWhereabouts> {
  const supervisor = mainThreadSupervisor();
  if (supervisor !== undefined) return supervisor.locate(gen);
  const reply = await askHost({ t: "locate", nonce: newId(), gen });
  if (reply.t === "runtime") return { alive: true };
  if (reply.t === "gone") return { alive: false, fate: reply.fate };
  throw new Error(`unexpected host reply ${reply.t} to locate`);
}

type FinalReply = Exclude<HostReply, { t: "ack" }>;

function askHost(request: HostRequest, signal?: AbortSignal): Promise<FinalReply> {
  return new Promise<FinalReply>((resolve, reject) => {
    const release = holdHostChannel();
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(ackTimer);
      unsubscribe();
      release();
      signal?.removeEventListener("abort", onAbort);
      action();
    };
    const ackTimer = setTimeout(
      () =>
        settle(() =>
          reject(
            new RuntimeHostUnavailableError({
              detail:
                `no main-thread host answered within ${HOST_ACK_TIMEOUT_MS} ms. The runtime must be spawned by the ` +
                "main thread so that it outlives worker threads: import @vllm-engine-core/runtime (or " +
                "@vllm-engine-core/client) on the main thread before connecting from a worker thread, and keep " +
                "the main thread's event loop responsive",
            }),
          ),
        ),
      HOST_ACK_TIMEOUT_MS,
    );
    const unsubscribe = onHostMessage((message) => {
      if (!("nonce" in message) || message.nonce !== request.nonce) return;
      if (message.t === "ack") {
        clearTimeout(ackTimer);
        return;
      }
      if (message.t === "runtime" || message.t === "gone" || message.t === "unavailable") {
        settle(() => resolve(message));
      }
    });
    const onAbort = () => settle(() => reject(signal?.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    postHostMessage(request);
  });
}

function withAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
