/**
 * A ratio over a sliding time window (numerator / denominator of the events of the last `windowMs`),
 * kept in a ring of fixed-size time buckets: adding is O(1) and allocation-free; a bucket older than
 * the window is cleared when the ring comes round to it. Pure: time comes from the caller.
 */
export class WindowedRatio {
  readonly #bucketMs: number;
  readonly #num: Float64Array;
  readonly #den: Float64Array;
  /** Absolute bucket number (floor(t / bucketMs)) that each slot holds. */
  readonly #slotOf: Float64Array;

  /**
   * @param windowMs length of the window, ms (default 60 s)
   * @param buckets slots in the ring; the window's edge is resolved to windowMs / buckets (default 60)
   */
  constructor(windowMs = 60_000, buckets = 60) {
    if (!(windowMs > 0) || !Number.isInteger(buckets) || buckets < 1) {
      throw new RangeError(
        `WindowedRatio: windowMs ${windowMs} and buckets ${buckets}: expected windowMs > 0 and an integer buckets >= 1`,
      );
    }
    this.#bucketMs = windowMs / buckets;
    this.#num = new Float64Array(buckets);
    this.#den = new Float64Array(buckets);
    this.#slotOf = new Float64Array(buckets).fill(-1);
  }

  /** Counts `den` events at time `now`, `num` of which are in the numerator. */
  add(now: number, num: number, den: number): void {
    const b = Math.floor(now / this.#bucketMs);
    const i = b % this.#num.length;
    if (this.#slotOf[i] !== b) {
      this.#slotOf[i] = b;
      this.#num[i] = 0;
      this.#den[i] = 0;
    }
    this.#num[i]! += num;
    this.#den[i]! += den;
  }

  /** Numerator and denominator summed over the buckets still inside the window at `now`. */
  totals(now: number): { num: number; den: number } {
    const current = Math.floor(now / this.#bucketMs);
    const oldest = current - this.#num.length + 1;
    let num = 0;
    let den = 0;
    for (let i = 0; i < this.#num.length; i++) {
      const b = this.#slotOf[i]!;
      if (b >= oldest && b <= current) {
        num += this.#num[i]!;
        den += this.#den[i]!;
      }
    }
    return { num, den };
  }

  /** num / den over the window, or NaN when the window holds no event. */
  ratio(now: number): number {
    const { num, den } = this.totals(now);
    return den > 0 ? num / den : NaN;
  }
}
