/**
 * The resident context memory of a context worker (the MABP paper's `Y_i` with budget `B_i`): objects by
 * signature with a size, the peer's demand per signature, and retention after each generated object —
 * by marginal value (expected reuse × work saved − holding cost), or the LRU / popularity baselines —
 * through src/routing/retention.ts. Counts churn (insertions + evictions).
 */
import { DecayedCounts } from "../routing/reuse-stats.js";
import { retain } from "../routing/retention.js";
import type { RetentionItem, RetentionPolicyName } from "../routing/retention.js";

export interface ContextMemoryOptions {
  /** Memory budget, in object-size units. */
  readonly budget: number;
  readonly policy: RetentionPolicyName;
  /** Holding cost θ per size unit over the horizon (marginal value only). */
  readonly holdingCost: number;
  /** Half-life of the demand counts, ms. */
  readonly halfLifeMs: number;
  /** Valuation horizon: expected reuse = demand rate × horizon, ms. */
  readonly horizonMs: number;
  /** What one reuse saves (work units, plus priced successor work). */
  readonly saved: number;
  /** Size of the object of a signature (> 0). */
  readonly sizeOf: (signature: number) => number;
}

interface Resident {
  readonly size: number;
  lastUsed: number;
}

/**
 * @example
 * const mem = new ContextMemory({ budget: 16, policy: "marginal-value", holdingCost: 0.1, halfLifeMs: 5000,
 *                                 horizonMs: 5000, saved: 3, sizeOf: () => 1 });
 * mem.demand(sig, now);
 * if (!mem.use(sig, now)) { ...serve the miss...; mem.generate(sig, clock.now()); }
 */
export class ContextMemory {
  readonly #o: ContextMemoryOptions;
  readonly #resident = new Map<number, Resident>();
  readonly #demand: DecayedCounts;
  #used = 0;
  /** Insertions + evictions since start. */
  churn = 0;

  constructor(options: ContextMemoryOptions) {
    this.#o = options;
    this.#demand = new DecayedCounts(options.halfLifeMs);
  }

  get used(): number {
    return this.#used;
  }

  get budget(): number {
    return this.#o.budget;
  }

  get size(): number {
    return this.#resident.size;
  }

  has(signature: number): boolean {
    return this.#resident.has(signature);
  }

  /** A request for `signature` arrived here (demand feeds expected reuse and popularity). */
  demand(signature: number, now: number): void {
    this.#demand.record(signature, now);
  }

  /** Use the object if resident (a hit): true on a hit. */
  use(signature: number, now: number): boolean {
    const r = this.#resident.get(signature);
    if (r === undefined) return false;
    r.lastUsed = now;
    return true;
  }

  /** Service generated the object of `signature`: retain a budget-feasible subset of resident ∪ {it}. */
  generate(signature: number, now: number): void {
    if (this.#resident.has(signature)) {
      this.#resident.get(signature)!.lastUsed = now;
      return;
    }
    const items: RetentionItem[] = [];
    for (const [sig, r] of this.#resident) items.push(this.#item(sig, r.size, r.lastUsed, true, now));
    const size = this.#o.sizeOf(signature);
    items.push(this.#item(signature, size, now, false, now));
    const kept = retain(this.#o.policy, items, this.#o.budget, { holdingCost: this.#o.holdingCost });
    const keep = new Set<number>();
    for (const it of kept) keep.add(it.signature);
    for (const [sig, r] of this.#resident) {
      if (keep.has(sig)) continue;
      this.#resident.delete(sig);
      this.#used -= r.size;
      this.churn++;
    }
    if (keep.has(signature)) {
      this.#resident.set(signature, { size, lastUsed: now });
      this.#used += size;
      this.churn++;
    }
  }

  /** Resident signatures, most recently used first (what the peer advertises, bounded by the caller). */
  signatures(): number[] {
    return [...this.#resident].sort((a, b) => b[1].lastUsed - a[1].lastUsed).map(([sig]) => sig);
  }

  #item(signature: number, size: number, lastUsed: number, resident: boolean, now: number): RetentionItem {
    return {
      signature,
      size,
      resident,
      expectedReuse: this.#demand.rate(signature, now) * this.#o.horizonMs,
      saved: this.#o.saved,
      lastUsed,
      popularity: this.#demand.count(signature, now),
    };
  }
}
