// Which engine vanished? The input ROUTER is told per routing identity (ZMQ_ROUTER_NOTIFY, draft option 97):
// on a disconnect libzmq queues [identity, <empty frame>] on the ROUTER. Engines never send anything on the
// input socket after their registration, so any empty frame afterwards is such a notification.
// ZMTP heartbeats on the same socket turn a frozen process or a silent network partition into a disconnect.
import type { ResolvedHeartbeat } from "@vllm-engine-core/config";
import * as zmq from "zeromq";

const ZMQ_ROUTER_NOTIFY = 97;
const ZMQ_NOTIFY_DISCONNECT = 2;

/**
 * Enables per-identity disconnect notifications on a ROUTER; must run before bind (libzmq copies options into
 * each listener). Returns false when this libzmq build lacks the draft API (then no vanish detection).
 */
export function enableDisconnectNotify(socket: zmq.Router): boolean {
  if (!zmq.capability.draft) return false;
  try {
    // setInt32Option is the native escape hatch zeromq.js uses for its own options; it is `protected` in the
    // typings because option 97 is still a libzmq draft.
    (socket as unknown as { setInt32Option(option: number, value: number): void }).setInt32Option(
      ZMQ_ROUTER_NOTIFY,
      ZMQ_NOTIFY_DISCONNECT,
    );
    return true;
  } catch {
    return false;
  }
}

/** zeromq.js socket options for the configured heartbeat (interval 0: off, and no timeout either). */
export function heartbeatSocketOptions(heartbeat: ResolvedHeartbeat): {
  heartbeatInterval: number;
  heartbeatTimeout: number;
} {
  return {
    heartbeatInterval: heartbeat.intervalMs,
    heartbeatTimeout: heartbeat.intervalMs > 0 ? heartbeat.timeoutMs : 0,
  };
}

/** A message on the input ROUTER after startup is a disconnect notification iff its payload is empty. */
export function disconnectedIdentity(frames: readonly Buffer[]): Buffer | undefined {
  return frames.length === 2 && frames[1]!.length === 0 ? frames[0] : undefined;
}
