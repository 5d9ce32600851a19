/**
 * How many of something run per key (probes per peer, measurement branches per peer): a key with none is
 * not held, so the map stays as small as what is running.
 */
export class RunningCounts<K> {
  readonly #counts = new Map<K, number>();

  /** Running for `key` now (0 when none). */
  of(key: K): number {
    return this.#counts.get(key) ?? 0;
  }

  /** One more runs for `key`. */
  started(key: K): void {
    this.#counts.set(key, this.of(key) + 1);
  }

  /** One of `key`'s ended (never below 0). */
  ended(key: K): void {
    const left = this.of(key) - 1;
    if (left > 0) this.#counts.set(key, left);
    else this.#counts.delete(key);
  }
}
