// The rendezvous: how any thread reaches a live runtime generation. Both ends are here.
//
// Only the main thread spawns runtimes (a worker's child threads die with it; see supervisor.ts), so:
// - on the main thread, ensureRuntime/locateRuntime ask the process's supervisor directly;
// - on a worker thread they ask the main-thread host over the host channel, a BroadcastChannel that every
//   thread opens under one name. The host acknowledges at once and answers when it can; no ack within
//   HOST_ACK_TIMEOUT_MS means nobody imported the package on the main thread (RuntimeHostUnavailableError);
// - the host also announces on it that a generation ended (crashed or retired), to every thread, itself
//   included: that is how each thread's links learn it (onRuntimeEnded).
// With a generation id in hand, a thread opens its own link to that runtime (link.ts).
//
//   worker thread                        main-thread host
//   { t: "ensure", nonce }        ───►   { t: "ack", nonce }, then { t: "runtime", nonce, gen }
//                                                               or { t: "unavailable", nonce, error }
//   { t: "locate", nonce, gen }   ───►   { t: "ack", nonce }, then { t: "runtime", nonce, gen }
//                                                               or { t: "gone", nonce, gen, fate }
//   every thread                  ◄───   { t: "ended", gen, fate }
import { BroadcastChannel, isMainThread } from "node:worker_threads";
import {
  deserializeError,
  RuntimeHostUnavailableError,
  type SerializedError,
  serializeError,
} from "@vllm-engine-core/errors";
import { RUNTIME_PROTOCOL_VERSION } from "@vllm-engine-core/protocol";
import type { RuntimeFate, RuntimeWhereabouts } from "../messages.js";
import { HOST_ACK_TIMEOUT_MS } from "../timing.js";
import { newId } from "./ids.js";
import { RuntimeSupervisor } from "./supervisor.js";
import { untilAborted } from "./until-aborted.js";

// ---------------------------------------------------------------------------------------------------
// The host channel's messages (nothing outside this module posts or reads them).

const HOST_CHANNEL = `vllm-engine-core:host:v${RUNTIME_PROTOCOL_VERSION}`;

type HostRequest = { t: "ensure"; nonce: string } | { t: "locate"; nonce: string; gen: string };

type HostReply =
  /** The main-thread host received the request (the runtime may still be starting). */
  | { t: "ack"; nonce: string }
  | { t: "runtime"; nonce: string; gen: string }
  | { t: "gone"; nonce: string; gen: string; fate: RuntimeFate }
  | { t: "unavailable"; nonce: string; error: SerializedError };

/** Posted by the main-thread host when a runtime generation ends. */
type HostBroadcast = { t: "ended"; gen: string; fate: RuntimeFate };

type HostChannelMessage = HostRequest | HostReply | HostBroadcast;

// ---------------------------------------------------------------------------------------------------
// This thread's end of the host channel: one per thread, unref'd unless a pending request holds it, so it
// never keeps a thread alive by itself.

type Listener = (message: HostChannelMessage) => void;

let channel: BroadcastChannel | undefined;
const listeners = new Set<Listener>();
let holds = 0;

function open(): BroadcastChannel {
  if (channel === undefined) {
    channel = new BroadcastChannel(HOST_CHANNEL);
    // A structured clone is untyped: HostChannelMessage is the contract of both ends, all in this module.
    channel.onmessage = (event) => deliver(event.data);
    channel.unref();
  }
  return channel;
}

/** To this thread's own listeners (a BroadcastChannel does not echo to its sender). */
function deliver(message: HostChannelMessage): void {
  for (const listener of [...listeners]) listener(message);
}

function post(message: HostChannelMessage): void {
  open().postMessage(message);
}

function listen(listener: Listener): () => void {
  open();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function hold(): () => void {
  const ch = open();
  if (holds++ === 0) ch.ref();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holds === 0) ch.unref();
  };
}

// ---------------------------------------------------------------------------------------------------
// Asking (any thread).

/** The generation of a runtime that accepts work, spawned on demand by the main-thread host. */
export async function ensureRuntime(signal?: AbortSignal): Promise<string> {
  signal?.throwIfAborted();
  const supervisor = mainThreadSupervisor();
  if (supervisor !== undefined) return untilAborted(supervisor.ensure(), signal);
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

/** Runs `listener` each time the main-thread host announces that a runtime generation ended. */
export function onRuntimeEnded(listener: (gen: string, fate: RuntimeFate) => void): () => void {
  return listen((message) => {
    if (message.t === "ended") listener(message.gen, message.fate);
  });
}

type FinalReply = Exclude<HostReply, { t: "ack" }>;

function askHost(request: HostRequest, signal?: AbortSignal): Promise<FinalReply> {
  return new Promise<FinalReply>((resolve, reject) => {
    const release = hold();
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
    const unsubscribe = listen((message) => {
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
    post(request);
  });
}

// ---------------------------------------------------------------------------------------------------
// Answering (the main-thread host): the process's one supervisor, wired to the host channel.

// One host per process, even if two copies of this package are loaded on the main thread.
const HOST_KEY = Symbol.for(`vllm-engine-core.runtime-supervisor.v${RUNTIME_PROTOCOL_VERSION}`);

/**
 * The process's supervisor, installing the main-thread host on first use (the package's entry calls this
 * on import); undefined on any other thread.
 */
export function mainThreadSupervisor(): RuntimeSupervisor | undefined {
  if (!isMainThread) return undefined;
  const slot = globalThis as unknown as Record<symbol, RuntimeSupervisor | undefined>;
  let supervisor = slot[HOST_KEY];
  if (supervisor === undefined) {
    supervisor = new RuntimeSupervisor((gen, fate) => {
      const ended: HostBroadcast = { t: "ended", gen, fate };
      post(ended);
      deliver(ended);
    });
    listen(answer(supervisor));
    supervisor.closeRuntimesOnExit();
    slot[HOST_KEY] = supervisor;
  }
  return supervisor;
}

/** Answers worker threads' requests: ack at once, then the supervisor's answer. */
function answer(supervisor: RuntimeSupervisor): Listener {
  return (message) => {
    if (message.t === "ensure") {
      const { nonce } = message;
      post({ t: "ack", nonce });
      supervisor.ensure().then(
        (gen) => post({ t: "runtime", nonce, gen }),
        (error: unknown) => post({ t: "unavailable", nonce, error: serializeError(error) }),
      );
    } else if (message.t === "locate") {
      const { nonce, gen } = message;
      post({ t: "ack", nonce });
      const found = supervisor.locate(gen);
      post(found.alive ? { t: "runtime", nonce, gen } : { t: "gone", nonce, gen, fate: found.fate });
    }
  };
}
