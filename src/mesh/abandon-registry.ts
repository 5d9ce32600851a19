/**
 * Branches queued or running on this node, by branch id, so an `Abandon` can stop them; and
 * tombstones for ids abandoned before their Branch call arrived (the Abandon stream and the Branch
 * call are separate HTTP/2 streams and may overtake each other).
 *
 * Ids are kept per issuer (the caller identity under mutual TLS, "" without it): an Abandon reaches
 * only the branches its own caller issued, and its tombstone waits only for that caller's Branch.
 */
export class AbandonRegistry {
  readonly #live = new Map<string, AbortController>();
  /** Every controller of work on this node, with or without an id (for shutdown). */
  readonly #all = new Set<AbortController>();
  readonly #tombstones = new Map<string, number>();
  readonly #tombstoneTtlMs: number;
  readonly #maxTombstones: number;
  readonly #maxTombstoneBytes: number;
  readonly #onEvict: ((dropped: number) => void) | undefined;
  /** Bytes the tombstones hold: 2 per id character plus a map entry's overhead. */
  #tombstoneBytes = 0;

  /**
   * Tombstones are bounded by age (`tombstoneTtlMs`), count (`maxTombstones`) and bytes
   * (`maxTombstoneBytes`): 30k ids of 16 KB each must not hold half a gigabyte. `onEvict` hears of
   * tombstones dropped early for the count or the bytes (a late Branch with that id will then run).
   */
  constructor(
    options: {
      tombstoneTtlMs?: number;
      maxTombstones?: number;
      maxTombstoneBytes?: number;
      onEvict?: (dropped: number) => void;
    } = {},
  ) {
    this.#tombstoneTtlMs = options.tombstoneTtlMs ?? 30_000;
    this.#maxTombstones = options.maxTombstones ?? 100_000;
    this.#maxTombstoneBytes = options.maxTombstoneBytes ?? 8 * 1024 * 1024;
    this.#onEvict = options.onEvict;
  }

  /** Bytes held by tombstones (estimate: 2 per id character + 64 per entry). */
  get tombstoneBytes(): number {
    return this.#tombstoneBytes;
  }

  /** Work registered (branches and coordinations). */
  get size(): number {
    return this.#all.size;
  }

  /**
   * Registers a branch; returns false when it was already abandoned (a tombstone was waiting).
   * A duplicate id replaces nothing: the first registration keeps the id.
   */
  add(branchId: string, controller: AbortController, issuer = ""): boolean {
    const key = keyOf(branchId, issuer);
    if (branchId !== "" && this.#forget(key)) return false;
    this.#all.add(controller);
    if (branchId === "") return true;
    if (!this.#live.has(key)) this.#live.set(key, controller);
    return true;
  }

  delete(branchId: string, controller: AbortController, issuer = ""): void {
    const key = keyOf(branchId, issuer);
    this.#all.delete(controller);
    if (this.#live.get(key) === controller) this.#live.delete(key);
  }

  /**
   * Aborts `issuer`'s branch if it is here (returns true), else remembers the id for a late arrival
   * of that issuer's Branch.
   */
  abandon(branchId: string, reason: unknown, now: number, issuer = ""): boolean {
    const key = keyOf(branchId, issuer);
    const c = this.#live.get(key);
    if (c !== undefined) {
      this.#live.delete(key);
      c.abort(reason);
      return true;
    }
    if (branchId !== "") this.#remember(key, now);
    return false;
  }

  /** Aborts all work (shutdown). */
  abandonAll(reason: unknown): void {
    const all = [...this.#all];
    this.#all.clear();
    this.#live.clear();
    for (const c of all) c.abort(reason);
  }

  #forget(branchId: string): boolean {
    if (!this.#tombstones.delete(branchId)) return false;
    this.#tombstoneBytes -= entryBytes(branchId);
    return true;
  }

  #remember(branchId: string, now: number): void {
    if (this.#tombstones.has(branchId)) return;
    const bytes = entryBytes(branchId);
    let early = 0;
    // Map iteration order is insertion order: expire from the front.
    for (const [id, at] of this.#tombstones) {
      const expired = at + this.#tombstoneTtlMs <= now;
      const full =
        this.#tombstones.size >= this.#maxTombstones ||
        this.#tombstoneBytes + bytes > this.#maxTombstoneBytes;
      if (!expired && !full) break;
      this.#forget(id);
      if (!expired) early++;
    }
    if (bytes > this.#maxTombstoneBytes) {
      early++;
    } else {
      this.#tombstones.set(branchId, now);
      this.#tombstoneBytes += bytes;
    }
    if (early > 0) this.#onEvict?.(early);
  }
}

/** The registry's key: the id alone without an issuer, else issuer and id (NUL is in neither). */
function keyOf(branchId: string, issuer: string): string {
  return issuer === "" ? branchId : `${issuer}\u0000${branchId}`;
}

function entryBytes(id: string): number {
  return 2 * id.length + 64;
}
