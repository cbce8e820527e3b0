// vLLM's automatic prefix caching as a client sees it (vllm/v1/core/kv_cache_manager.py
// get_computed_blocks, vllm/v1/core/kv_cache_utils.py hash_block_tokens): a full block of tokens is cached
// under a hash chained over every block before it (cache_salt mixed into the first block, the LoRA name into
// every block), and a new request reuses the longest run of cached blocks from its start — at most
// `num_tokens - 1` tokens, since the last prompt token is always recomputed for its logits. The KV itself
// is not modelled: only which prefixes are cached, so prefill stats and prefix-cache stats come out as
// vLLM's. Capacity is the engine's block count, oldest entries evicted first (vLLM evicts free blocks in
// LRU order).
import { createHash } from "node:crypto";

export class MockPrefixCache {
  /** Block hash → true, in least-recently-used order (a hit or a store moves a block to the end). */
  readonly #blocks = new Map<string, true>();

  constructor(
    readonly blockSize: number,
    readonly capacityBlocks: number,
  ) {}

  /**
   * Extends `keys` (the request's block hashes so far, kept by the caller) to every full block of `tokens`,
   * as Request.block_hashes grows with the request's tokens.
   */
  extendKeys(
    keys: string[],
    tokens: readonly number[],
    extra: { salt: string | null; lora: string | null },
  ): void {
    for (let i = keys.length; (i + 1) * this.blockSize <= tokens.length; i++) {
      const hash = createHash("sha256");
      hash.update(i === 0 ? "" : keys[i - 1]!);
      hash.update(`|${tokens.slice(i * this.blockSize, (i + 1) * this.blockSize).join(",")}`);
      if (i === 0 && extra.salt !== null) hash.update(`|salt:${extra.salt}`);
      if (extra.lora !== null) hash.update(`|lora:${extra.lora}`);
      keys.push(hash.digest("base64"));
    }
  }

  /** find_longest_cache_hit: cached tokens at the start of a request of `numTokens` tokens. */
  hitTokens(keys: readonly string[], numTokens: number): number {
    const maxBlocks = Math.floor(Math.max(0, numTokens - 1) / this.blockSize);
    let hits = 0;
    while (hits < Math.min(maxBlocks, keys.length) && this.#blocks.has(keys[hits]!)) hits++;
    for (let i = 0; i < hits; i++) this.#touch(keys[i]!);
    return hits * this.blockSize;
  }

  /** cache_full_blocks: the request's full blocks (all of `keys`) are cached from now on. */
  store(keys: readonly string[]): void {
    for (const key of keys) this.#touch(key);
    while (this.#blocks.size > this.capacityBlocks) {
      const oldest = this.#blocks.keys().next().value;
      if (oldest === undefined) break;
      this.#blocks.delete(oldest);
    }
  }

  /** reset_prefix_cache. */
  reset(): void {
    this.#blocks.clear();
  }

  #touch(key: string): void {
    this.#blocks.delete(key);
    this.#blocks.set(key, true);
  }
}
