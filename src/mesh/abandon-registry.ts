/**
 * Branches queued or running on this node, by branch id, so an `Abandon` can stop them; and
 * tombstones for ids abandoned before their Branch call arrived (the Abandon stream and the Branch
 * call are separate HTTP/2 streams and may overtake each other).
 */
export class AbandonRegistry {
  readonly #live = new Map<string, AbortController>();
  /** Every controller of work on this node, with or without an id (for shutdown). */
  readonly #all = new Set<AbortController>();
  readonly #tombstones = new Map<string, number>();
  readonly #tombstoneTtlMs: number;
  readonly #maxTombstones: number;

  constructor(options: { tombstoneTtlMs?: number; maxTombstones?: number } = {}) {
    this.#tombstoneTtlMs = options.tombstoneTtlMs ?? 30_000;
    this.#maxTombstones = options.maxTombstones ?? 100_000;
  }

  /** Work registered (branches and coordinations). */
  get size(): number {
    return this.#all.size;
  }

  /**
   * Registers a branch; returns false when it was already abandoned (a tombstone was waiting).
   * A duplicate id replaces nothing: the first registration keeps the id.
   */
  add(branchId: string, controller: AbortController): boolean {
    if (branchId !== "" && this.#tombstones.delete(branchId)) return false;
    this.#all.add(controller);
    if (branchId === "") return true;
    if (!this.#live.has(branchId)) this.#live.set(branchId, controller);
    return true;
  }

  delete(branchId: string, controller: AbortController): void {
    this.#all.delete(controller);
    if (this.#live.get(branchId) === controller) this.#live.delete(branchId);
  }

  /** Aborts the branch if it is here (returns true), else remembers the id for a late arrival. */
  abandon(branchId: string, reason: unknown, now: number): boolean {
    const c = this.#live.get(branchId);
    if (c !== undefined) {
      this.#live.delete(branchId);
      c.abort(reason);
      return true;
    }
    if (branchId !== "") this.#remember(branchId, now);
    return false;
  }

  /** Aborts all work (shutdown). */
  abandonAll(reason: unknown): void {
    const all = [...this.#all];
    this.#all.clear();
    this.#live.clear();
    for (const c of all) c.abort(reason);
  }

  #remember(branchId: string, now: number): void {
    // Map iteration order is insertion order: expire from the front.
    for (const [id, at] of this.#tombstones) {
      if (at + this.#tombstoneTtlMs > now && this.#tombstones.size < this.#maxTombstones) break;
      this.#tombstones.delete(id);
    }
    this.#tombstones.set(branchId, now);
  }
}
