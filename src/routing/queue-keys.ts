/**
 * Queue keys (`class/stage`) as small integers, so that what a router keeps per peer — reservations and
 * the queue depths of the view it last scored — lives in arrays indexed by key instead of maps keyed by
 * string. Keys come from tasks and primitives, which a coordinator's clients choose; past `limit` keys a
 * key gets no id (`-1`) and takes the string path, so a stream of distinct classes cannot grow the
 * router's memory without bound.
 */

/** Most distinct queue keys a router numbers. */
export const MAX_QUEUE_KEYS = 1024;

export class QueueKeys {
  readonly #ids = new Map<string, number>();
  readonly #names: string[] = [];

  constructor(readonly limit = MAX_QUEUE_KEYS) {}

  /** Keys numbered so far; ids are `0 .. size − 1`. */
  get size(): number {
    return this.#names.length;
  }

  /**
   * The id of `key`, numbering it if new; `-1` once `limit` keys are numbered.
   *
   * @example
   * const keys = new QueueKeys();
   * keys.id("rag/0"); // 0
   * keys.id("rag/1"); // 1
   * keys.id("rag/0"); // 0
   */
  id(key: string): number {
    const known = this.#ids.get(key);
    if (known !== undefined) return known;
    if (this.#names.length >= this.limit) return -1;
    const id = this.#names.length;
    this.#ids.set(key, id);
    this.#names.push(key);
    return id;
  }

  name(id: number): string {
    return this.#names[id]!;
  }
}
