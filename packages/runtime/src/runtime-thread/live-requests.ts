// The one registry of a connection's live requests: request id → the lane (thread) that owns it, its slot
// on that thread, and its engine. The duplicate-id check, the lookup by the id's bytes in an output frame,
// and a request's end (written once: `end`) are here. How each id ended lately is remembered, so an output
// that trails an abort is told apart from an engine anomaly.
import { DuplicateRequestIdError, type SerializedError } from "@vllm-engine-core/errors";
import type { RequestRef } from "../messages.js";
import type { EngineState } from "./engines.js";
import type { ThreadLane } from "./lane.js";
import { type EndedHow, RecentlyEnded } from "./recently-ended.js";
import { RequestRegistry } from "./request-registry.js";

export interface LiveRequest {
  readonly requestId: string;
  readonly lane: ThreadLane;
  /** The owner thread's slot for it (CallMap submit): what forwarded frames and endings name it by. */
  readonly slot: number;
  readonly engine: EngineState;
}

export class LiveRequests {
  readonly #registry = new RequestRegistry<LiveRequest>();
  readonly #ended = new RecentlyEnded();

  get size(): number {
    return this.#registry.size;
  }

  /** Registers a request; an id that is live on this connection (on any thread) is refused. */
  add(requestId: string, lane: ThreadLane, slot: number, engine: EngineState): LiveRequest {
    if (this.#registry.has(requestId)) throw new DuplicateRequestIdError({ requestId });
    const request: LiveRequest = { requestId, lane, slot, engine };
    this.#registry.set(requestId, request);
    this.#ended.delete(requestId);
    engine.inflight++;
    return request;
  }

  get(requestId: string): LiveRequest | undefined {
    return this.#registry.get(requestId);
  }

  /** The request whose id is the UTF-8 bytes `buf[start, end)` (see RequestRegistry.getByKey). */
  getByKey(buf: Uint8Array, start: number, end: number, hash: number): LiveRequest | undefined {
    return this.#registry.getByKey(buf, start, end, hash);
  }

  /** How `requestId` ended, if it did lately. */
  endedHow(requestId: string): EndedHow | undefined {
    return this.#ended.get(requestId);
  }

  /** Ends `request` (false when it already ended): its id is free again and its engine has one less. */
  end(request: LiveRequest, how: EndedHow): boolean {
    if (this.#registry.get(request.requestId) !== request) return false;
    this.#registry.delete(request.requestId);
    request.engine.inflight--;
    this.#ended.add(request.requestId, how);
    return true;
  }

  /** Ends every live request `which` selects; returns them. */
  endWhere(which: (request: LiveRequest) => boolean, how: EndedHow): LiveRequest[] {
    const ended: LiveRequest[] = [];
    for (const [, request] of this.#registry) {
      if (which(request) && this.end(request, how)) ended.push(request);
    }
    return ended;
  }

  /** Forgets every request at once (the connection closed). */
  clear(): LiveRequest[] {
    const all = [...this.#registry].map(([, request]) => request);
    this.#registry.clear();
    return all;
  }
}

/**
 * Tells each owner thread that these requests ended without a final output: failed with `error`, or
 * aborted (`error` null). `except`: a lane that ended its own already (its abort ended them at once).
 */
export function tellOwners(
  requests: readonly LiveRequest[],
  error: SerializedError | null,
  except?: ThreadLane,
): void {
  const byLane = new Map<ThreadLane, RequestRef[]>();
  for (const request of requests) {
    if (request.lane === except) continue;
    const refs = byLane.get(request.lane);
    const ref: RequestRef = [request.requestId, request.slot, request.engine.index];
    if (refs === undefined) byLane.set(request.lane, [ref]);
    else refs.push(ref);
  }
  for (const [lane, refs] of byLane) lane.post({ t: "ended", requests: refs, error });
}

/** Groups requests by engine (one ABORT per engine). */
export function byEngine(requests: readonly LiveRequest[]): Map<EngineState, string[]> {
  const grouped = new Map<EngineState, string[]>();
  for (const request of requests) {
    const ids = grouped.get(request.engine);
    if (ids === undefined) grouped.set(request.engine, [request.requestId]);
    else ids.push(request.requestId);
  }
  return grouped;
}
