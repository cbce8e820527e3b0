// Requests that ended lately, and how. An output for an id that is no longer live means something different
// depending on how it ended: after an abort it is expected (the engine had the output in flight), after the
// request's own finish it is an engine anomaly, and for an id never seen it is one too.

export type EndedHow = "aborted" | "finished";

/** Long enough to outlast outputs in flight at abort time, even at thousands of requests per second. */
export const RECENTLY_ENDED_CAPACITY = 16_384;

export class RecentlyEnded {
  readonly #capacity: number;
  // Map keeps insertion order: the first key is the oldest.
  readonly #ended = new Map<string, EndedHow>();

  constructor(capacity = RECENTLY_ENDED_CAPACITY) {
    this.#capacity = capacity;
  }

  add(requestId: string, how: EndedHow): void {
    this.#ended.delete(requestId);
    this.#ended.set(requestId, how);
    if (this.#ended.size > this.#capacity) {
      this.#ended.delete(this.#ended.keys().next().value as string);
    }
  }

  /** A live request with this id again: its old ending no longer explains outputs for the id. */
  delete(requestId: string): void {
    this.#ended.delete(requestId);
  }

  get(requestId: string): EndedHow | undefined {
    return this.#ended.get(requestId);
  }

  get size(): number {
    return this.#ended.size;
  }
}
