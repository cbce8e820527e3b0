// Input-socket registrations: one [identity, EngineCoreReadyResponse] per expected engine (spec §3.4 step 8).

import {
  type EngineIndexRange,
  HandshakeTimeoutError,
  UnexpectedHandshakeMessageError,
} from "@vllm-engine-core/errors";
import {
  decodeReadyResponse,
  type EngineCoreReadyResponse,
  engineIdentity,
  engineIndexFromIdentity,
} from "@vllm-engine-core/protocol";
import type * as zmq from "zeromq";
import { compareIdentity, identityHex, unexpectedIdentity } from "./identity.js";
import type { ConnectedEngine } from "./types.js";
import { receiveWithin } from "./waits.js";

export interface RegistrationParams {
  socket: zmq.Router;
  /** Real bound input endpoint (for errors). */
  address: string;
  /** One registration per engine of this range (handshake-owner: the engines that said HELLO). */
  expected: EngineIndexRange;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

/** An engine that registered; its output address is known to the caller, not to the input socket. */
export type RegisteredEngine = Omit<ConnectedEngine, "outputAddress">;

/** Waits for every expected engine's registration; returns the engines sorted by identity bytes. */
export async function awaitRegistrations(params: RegistrationParams): Promise<RegisteredEngine[]> {
  const { socket, address, timeoutMs, signal } = params;
  const { start, count } = params.expected;
  const pending = new Map(
    Array.from({ length: count }, (_, k) => {
      const identity = engineIdentity(start + k);
      return [identityHex(identity), identity] as const;
    }),
  );
  const registered = new Map<string, RegisteredEngine>();

  while (pending.size > 0) {
    const waitingFor = [...pending.values()].map(engineIndexFromIdentity);
    const frames = await receiveWithin(
      socket,
      timeoutMs,
      signal,
      () =>
        new HandshakeTimeoutError({
          stage: "REGISTRATION",
          engineIndex: waitingFor.length === 1 ? waitingFor[0]! : null,
          address,
          timeoutMs,
        }),
    );
    const identity = frames[0];
    const index = identity?.length === 2 ? engineIndexFromIdentity(identity) : undefined;
    if (frames.length !== 2 || identity === undefined) {
      throw new UnexpectedHandshakeMessageError({
        engineIndex: index,
        address,
        detail: `expected 2 frames [identity, EngineCoreReadyResponse] for the input registration, got ${Math.max(frames.length - 1, 0)} frame(s) after the identity`,
      });
    }
    const hex = identityHex(identity);
    const payload = frames[1]!;
    if (!pending.has(hex)) {
      if (registered.has(hex)) {
        throw new UnexpectedHandshakeMessageError({
          engineIndex: index,
          address,
          detail:
            payload.length === 0
              ? "the engine disconnected from the input socket before every engine had registered"
              : "duplicate input registration",
        });
      }
      // An empty frame from a stranger is the ROUTER's disconnect notification for a stray peer: not ours.
      if (payload.length === 0) continue;
      // Neither pending nor registered: outside the expected range (the same check as the handshake's).
      throw unexpectedIdentity(identity, address, params.expected);
    }
    if (payload.length === 0) {
      throw new UnexpectedHandshakeMessageError({
        engineIndex: index,
        address,
        detail:
          "empty registration frame: the engine disconnected before registering, or it predates vLLM c8d98f81f (2026-04-09), which added the EngineCoreReadyResponse payload",
      });
    }
    let readyResponse: EngineCoreReadyResponse;
    try {
      readyResponse = decodeReadyResponse(payload);
    } catch (error) {
      throw new UnexpectedHandshakeMessageError({
        engineIndex: index,
        address,
        detail: `registration payload is not an EngineCoreReadyResponse (${error instanceof Error ? error.message : String(error)})`,
      });
    }
    pending.delete(hex);
    registered.set(hex, {
      index: engineIndexFromIdentity(identity),
      identity: new Uint8Array(identity),
      readyResponse,
    });
  }
  return [...registered.values()].sort((a, b) => compareIdentity(a.identity, b.identity));
}
