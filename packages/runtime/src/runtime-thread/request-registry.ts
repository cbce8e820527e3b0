// The runtime's live requests of one connection, by id, and by the id's UTF-8 bytes: output messages are
// routed straight from the bytes readOutputRoute located (requestIdKeys), so no id string is built and
// hashed per output on the runtime thread. The string side serves everything else (submit, abort, close).
import { requestIdHash } from "@vllm-engine-core/protocol";

interface Entry<T> {
  readonly id: string;
  readonly key: Uint8Array;
  readonly hash: number;
  readonly value: T;
  /** The next entry whose hash is the same (a collision chain; almost always undefined). */
  next: Entry<T> | undefined;
}

export class RequestRegistry<T> {
  readonly #byId = new Map<string, Entry<T>>();
  readonly #byHash = new Map<number, Entry<T>>();

  get size(): number {
    return this.#byId.size;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  get(id: string): T | undefined {
    return this.#byId.get(id)?.value;
  }

  /** Adds `id` (the caller checked that it is not live: ids are unique per connection). */
  set(id: string, value: T): void {
    const key = Buffer.from(id, "utf8");
    const hash = requestIdHash(key);
    const entry: Entry<T> = { id, key, hash, value, next: this.#byHash.get(hash) };
    this.#byId.set(id, entry);
    this.#byHash.set(hash, entry);
  }

  delete(id: string): boolean {
    const entry = this.#byId.get(id);
    if (entry === undefined) return false;
    this.#byId.delete(id);
    let head = this.#byHash.get(entry.hash);
    if (head === entry) {
      if (entry.next === undefined) this.#byHash.delete(entry.hash);
      else this.#byHash.set(entry.hash, entry.next);
    } else {
      while (head !== undefined && head.next !== entry) head = head.next;
      if (head !== undefined) head.next = entry.next;
    }
    return true;
  }

  clear(): void {
    this.#byId.clear();
    this.#byHash.clear();
  }

  /** The request whose id is the UTF-8 bytes `buf[start, end)`, whose requestIdHash is `hash`. */
  getByKey(buf: Uint8Array, start: number, end: number, hash: number): T | undefined {
    const length = end - start;
    for (let entry = this.#byHash.get(hash); entry !== undefined; entry = entry.next) {
      const key = entry.key;
      if (key.length !== length) continue;
      let i = 0;
      while (i < length && key[i] === buf[start + i]) i++;
      if (i === length) return entry.value;
    }
    return undefined;
  }

  /** [id, value] of every live request, in the order they were added (deleting while iterating is fine). */
  *[Symbol.iterator](): IterableIterator<[string, T]> {
    for (const entry of this.#byId.values()) yield [entry.id, entry.value];
  }
}
