// Requests (and utility calls) that ended lately, and how. An output for an id that is no longer live means
// something different depending on how it ended: after an abort it is expected (the engine had the output
// in flight), after the request's own finish it is an engine anomaly, and for an id never seen it is one
// too. Likewise a utility reply for a call that timed out or was aborted is late, not unknown.

export type EndedHow = "aborted" | "finished";

/** Long enough to outlast outputs in flight at abort time, even at thousands of requests per second. */
export const RECENTLY_ENDED_CAPACITY = 16_384;

export class RecentlyEnded<K = string, H = EndedHow> {
  readonly #capacity: number;
  // Map keeps insertion order: the first key is the oldest.
  readonly #ended = new Map<K, H>();

  constructor(capacity = RECENTLY_ENDED_CAPACITY) {
    this.#capacity = capacity;
  }

  add(id: K, how: H): void {
    this.#ended.delete(id);
    this.#ended.set(id, how);
    if (this.#ended.size > this.#capacity) {
      this.#ended.delete(this.#ended.keys().next().value as K);
    }
  }

  /** A live request with this id again: its old ending no longer explains outputs for the id. */
  delete(id: K): void {
    this.#ended.delete(id);
  }

  get(id: K): H | undefined {
    return this.#ended.get(id);
  }

  get size(): number {
    return this.#ended.size;
  }
}
