// HELLO → INIT → READY on the handshake ROUTER (spec §3.4 steps 5–7).

import {
  EngineDeadError,
  type EngineIndexRange,
  HandshakeTimeoutError,
  UnexpectedHandshakeMessageError,
} from "@vllm-engine-core/errors";
import {
  decodeHandshakeStatus,
  engineIndexFromIdentity,
  type HandshakeStatus,
} from "@vllm-engine-core/protocol";
import type * as zmq from "zeromq";
import { identityHex, indexInRange, unexpectedIdentity } from "./identity.js";
import { disconnectedIdentity } from "./liveness.js";
import { abortable, receiveWithin } from "./waits.js";

export interface HandshakeParams {
  socket: zmq.Router;
  /** Real bound handshake endpoint (for errors). */
  address: string;
  engineCount: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Encoded INIT payload for the engine that says HELLO `helloOrder`-th (0-based). */
  initFor: (helloOrder: number) => Uint8Array;
  /** In-proc coordinator startup gate, run between the HELLO and READY phases. */
  coordinatorGate: (() => Promise<void>) | undefined;
}

type EngineState = "hello" | "ready";

/**
 * Runs the handshake for engines 0 … `engineCount - 1` (the ones a vLLM frontend launches:
 * `launch_core_engines` makes one `CoreEngine(index=i)` per data-parallel rank); returns their identities
 * keyed by hex, in HELLO order. A message from any other identity fails the handshake before anything is
 * sent to that peer.
 */
export async function runHandshake(params: HandshakeParams): Promise<Map<string, Uint8Array>> {
  const { socket, address, engineCount, timeoutMs, signal } = params;
  const range: EngineIndexRange = { start: 0, count: engineCount };
  const parse = (frames: Buffer[]) => parseHandshakeMessage(frames, address, range);
  const states = new Map<string, EngineState>();
  const identities = new Map<string, Uint8Array>();
  const pendingReady = () =>
    [...states]
      .filter(([, s]) => s !== "ready")
      .map(([hex]) => engineIndexFromIdentity(identities.get(hex)!));

  // HELLO phase: every engine says HELLO and gets INIT. Without a coordinator an engine may already say READY.
  while (identities.size < engineCount) {
    const frames = await receiveWithin(
      socket,
      timeoutMs,
      signal,
      () => new HandshakeTimeoutError({ stage: "HELLO", engineIndex: null, address, timeoutMs }),
    );
    if (isDisconnectNotification(frames, states, address)) continue;
    const { identity, hex, index, status } = parse(frames);
    if (status.status === "HELLO") {
      if (states.has(hex)) {
        throw new UnexpectedHandshakeMessageError({
          engineIndex: index,
          address,
          detail: "duplicate HELLO (this engine identity already completed HELLO; two engines share a rank?)",
        });
      }
      await abortable(socket.send([identity, params.initFor(identities.size)]), signal);
      states.set(hex, "hello");
      identities.set(hex, identity);
    } else if (status.status === "READY") {
      if (states.has(hex) && params.coordinatorGate !== undefined) {
        throw new UnexpectedHandshakeMessageError({
          engineIndex: index,
          address,
          detail: "READY before the coordinator startup gate opened",
        });
      }
      markReady(states, hex, index, address);
    } else {
      throw unexpectedStatus(status, index, address, "HELLO");
    }
  }

  let inFlight: Promise<Buffer[]> | undefined;
  if (params.coordinatorGate !== undefined) {
    ({ inFlight } = await gateWatchingHandshake(params.coordinatorGate, socket, states, address, range));
  }

  // READY phase: every engine that said HELLO must now say READY (once).
  for (let pending = pendingReady(); pending.length > 0; pending = pendingReady()) {
    const only = pending.length === 1 ? pending[0]! : null;
    const frames = await receiveWithin(
      socket,
      timeoutMs,
      signal,
      () => new HandshakeTimeoutError({ stage: "READY", engineIndex: only, address, timeoutMs }),
      inFlight,
    );
    inFlight = undefined;
    if (isDisconnectNotification(frames, states, address)) continue;
    // Every engine of the range said HELLO by now, so an identity in range is a known engine.
    const { hex, index, status } = parse(frames);
    if (status.status === "READY") {
      markReady(states, hex, index, address);
    } else if (status.status === "HELLO") {
      throw new UnexpectedHandshakeMessageError({
        engineIndex: index,
        address,
        detail: "duplicate HELLO after INIT was sent (the engine restarted during startup?)",
      });
    } else {
      throw unexpectedStatus(status, index, address, "READY");
    }
  }
  return identities;
}

/**
 * Runs the in-process coordinator gate while still watching the handshake socket: no engine may speak there
 * before the gate opens, so a message is either an engine's disconnect (it died during startup: fail now,
 * not at the COORDINATOR timeout) or a READY that came too early. Returns the receive still in flight on the
 * handshake socket when the gate opened, for the READY phase to continue with (wrapped: an async function
 * would otherwise wait for it).
 */
async function gateWatchingHandshake(
  gate: () => Promise<void>,
  socket: zmq.Router,
  states: Map<string, EngineState>,
  address: string,
  range: EngineIndexRange,
): Promise<{ inFlight: Promise<Buffer[]> }> {
  const gateOpened = gate().then(() => undefined);
  // Whichever side loses is settled later (the socket closes on failure): never an unhandled rejection.
  gateOpened.catch(() => undefined);
  for (;;) {
    const receiving = socket.receive();
    receiving.catch(() => undefined);
    const frames = await Promise.race([gateOpened, receiving]);
    if (frames === undefined) return { inFlight: receiving };
    if (isDisconnectNotification(frames, states, address)) continue;
    const { index } = parseHandshakeMessage(frames, address, range);
    throw new UnexpectedHandshakeMessageError({
      engineIndex: index,
      address,
      detail: "READY before the coordinator startup gate opened",
    });
  }
}

/**
 * True for a ROUTER_NOTIFY disconnect notification, which the caller skips: engines close the handshake
 * socket after READY (normal), and strangers are not ours. But an engine between HELLO and READY that
 * disconnects has died during startup: throw now rather than at the READY timeout.
 */
function isDisconnectNotification(
  frames: readonly Buffer[],
  states: Map<string, EngineState>,
  address: string,
): boolean {
  const identity = disconnectedIdentity(frames);
  if (identity === undefined) return false;
  if (states.get(identityHex(identity)) !== "hello") return true;
  throw new EngineDeadError({
    engineIndex: engineIndexFromIdentity(identity),
    reason: `it disconnected from the handshake socket ${address} after HELLO, before READY (it exited or crashed during startup)`,
    duringStartup: true,
  });
}

function markReady(states: Map<string, EngineState>, hex: string, index: number, address: string): void {
  const state = states.get(hex);
  if (state === undefined) {
    // vLLM: "Unexpected READY message for … engine N in NEW state" (wait_for_engine_startup).
    throw new UnexpectedHandshakeMessageError({
      engineIndex: index,
      address,
      detail: "READY before HELLO (an engine says HELLO first and READY only after it received INIT)",
    });
  }
  if (state === "ready") {
    throw new UnexpectedHandshakeMessageError({ engineIndex: index, address, detail: "duplicate READY" });
  }
  states.set(hex, "ready");
}

interface ParsedHandshakeMessage {
  identity: Uint8Array;
  hex: string;
  index: number;
  status: HandshakeStatus;
}

/** Checks the frames, then the identity against `range` (vLLM's order), then decodes the status map. */
function parseHandshakeMessage(
  frames: Buffer[],
  address: string,
  range: EngineIndexRange,
): ParsedHandshakeMessage {
  const identity = frames[0];
  if (frames.length !== 2 || identity === undefined) {
    throw new UnexpectedHandshakeMessageError({
      engineIndex: identity?.length === 2 ? engineIndexFromIdentity(identity) : undefined,
      address,
      detail: `expected 2 frames [identity, status map], got ${Math.max(frames.length - 1, 0)} frame(s) after the identity`,
    });
  }
  const index = indexInRange(identity, range);
  if (index === undefined) throw unexpectedIdentity(identity, address, range);
  const hex = identityHex(identity);
  let status: HandshakeStatus;
  try {
    status = decodeHandshakeStatus(frames[1]!);
  } catch (error) {
    throw new UnexpectedHandshakeMessageError({
      engineIndex: index,
      address,
      detail: `payload is not a HELLO/READY status map (${error instanceof Error ? error.message : String(error)})`,
    });
  }
  return { identity, hex, index, status };
}

function unexpectedStatus(
  status: HandshakeStatus,
  index: number,
  address: string,
  phase: "HELLO" | "READY",
): UnexpectedHandshakeMessageError {
  return new UnexpectedHandshakeMessageError({
    engineIndex: index,
    address,
    detail: `unexpected handshake status ${JSON.stringify(status.status)} during the ${phase} phase (expected "HELLO" or "READY")`,
  });
}
