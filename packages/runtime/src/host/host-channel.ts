// This thread's end of the host channel: the BroadcastChannel on which worker threads ask the main-thread
// host for a runtime and on which the host announces that a runtime generation ended. One instance per
// thread, unref'd unless someone holds it (a pending rendezvous), so it never keeps a thread alive by itself.
import { BroadcastChannel } from "node:worker_threads";
import { HOST_CHANNEL, type HostChannelMessage } from "../messages.js";

type Listener = (message: HostChannelMessage) => void;

let channel: BroadcastChannel | undefined;
const listeners = new Set<Listener>();
let holds = 0;

function open(): BroadcastChannel {
  if (channel === undefined) {
    channel = new BroadcastChannel(HOST_CHANNEL);
    channel.onmessage = (event) => {
      const message = (event as MessageEvent).data as HostChannelMessage;
      for (const listener of [...listeners]) listener(message);
    };
    channel.unref();
  }
  return channel;
}

export function postHostMessage(message: HostChannelMessage): void {
  open().postMessage(message);
}

/** Deliver a message to this thread's own listeners (a BroadcastChannel does not echo to its sender). */
export function emitHostMessageLocally(message: HostChannelMessage): void {
  for (const listener of [...listeners]) listener(message);
}

/** Listen for host-channel messages from other threads; returns the unsubscribe function. */
export function onHostMessage(listener: Listener): () => void {
  open();
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Keep this thread alive while waiting for an answer on the host channel; returns the release function. */
export function holdHostChannel(): () => void {
  const ch = open();
  if (holds++ === 0) ch.ref();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holds === 0) ch.unref();
  };
}
