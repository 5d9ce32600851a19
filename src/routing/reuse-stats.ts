/**
 * Exponentially decayed request counts per memory signature: the demand a peer sees for each object.
 * Retention reads them as expected reuse (MABP) or popularity (GreedyCache). Bounded: past `maxEntries`
 * the weakest entry is dropped.
 *
 * Counts are kept scaled to a base time (`value · e^{λ(t − base)}`), so recording and reading cost a
 * multiplication; the base moves forward (rescaling every entry) before the scale could overflow.
 */

const MAX_EXPONENT = 40;

/**
 * @example
 * const demand = new DecayedCounts(50); // half-life 50 time units
 * demand.record(sig, now);
 * demand.rate(sig, now); // ≈ requests per time unit, recently
 */
export class DecayedCounts {
  private readonly scaled = new Map<number, number>();
  private readonly lambda: number;
  private base = 0;
  private baseSet = false;
  private factorAt = NaN;
  private factor = 1;

  constructor(
    readonly halfLife: number,
    private readonly maxEntries = 4096,
  ) {
    this.lambda = Math.LN2 / halfLife;
  }

  record(signature: number, now: number, amount = 1): void {
    this.rebase(now);
    const add = amount * Math.exp(this.lambda * (now - this.base));
    const v = this.scaled.get(signature);
    if (v === undefined && this.scaled.size >= this.maxEntries) this.evictWeakest();
    this.scaled.set(signature, (v ?? 0) + add);
  }

  /** Decayed count at `now` (`now` at or after the last record). */
  count(signature: number, now: number): number {
    const v = this.scaled.get(signature);
    if (v === undefined) return 0;
    return v * this.decay(now);
  }

  /** Decayed count per time unit: the count over the decay's effective window (1/λ). */
  rate(signature: number, now: number): number {
    return this.count(signature, now) * this.lambda;
  }

  /** A number that orders signatures by their current count (no decay applied): for sorting. */
  weight(signature: number): number {
    return this.scaled.get(signature) ?? 0;
  }

  get size(): number {
    return this.scaled.size;
  }

  private decay(now: number): number {
    if (now !== this.factorAt) {
      this.factorAt = now;
      this.factor = Math.exp(-this.lambda * (now - this.base));
    }
    return this.factor;
  }

  private rebase(now: number): void {
    if (!this.baseSet) {
      this.base = now;
      this.baseSet = true;
      return;
    }
    const exponent = this.lambda * (now - this.base);
    if (exponent <= MAX_EXPONENT) return;
    const f = Math.exp(-exponent);
    for (const [k, v] of this.scaled) {
      const nv = v * f;
      if (nv < 1e-12) this.scaled.delete(k);
      else this.scaled.set(k, nv);
    }
    this.base = now;
    this.factorAt = NaN;
  }

  private evictWeakest(): void {
    let weakest: number | undefined;
    let min = Infinity;
    for (const [sig, v] of this.scaled) {
      if (v < min) {
        min = v;
        weakest = sig;
      }
    }
    if (weakest !== undefined) this.scaled.delete(weakest);
  }
}
