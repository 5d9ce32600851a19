import { arrayBytes } from "./footprint.js";
import { logLinearIndex, logLinearLow, logLinearWidth } from "./log-linear.js";
import { SliceRing } from "./slice-ring.js";
import { SlotFifo } from "./slot-fifo.js";

/**
 * Value range of every bucket index of the window's layout: samples counted at index `i` lie in
 * `[lowUs[i], lowUs[i] + widthUs[i])`. One table for every window (the layout does not depend on the options).
 */
export interface BucketTable {
  readonly lowUs: Float64Array;
  readonly widthUs: Float64Array;
}

/** Values (µs) of at most 2^31 − 1 use the bit arithmetic below; the options cap the range well under it. */
export const MAX_TRACKABLE_US = 0x7fffffff;

/** Sub-buckets per power of two: 2^SUB_BITS / 2 = 64, so a bucket is at most 1/64 (1.6 %) of its low edge. */
const SUB_BITS = 7;

/** The bucket of an integer value `v` (µs) in [0, 2^31): 64 sub-buckets per power of two, 1 µs wide below 128 µs. */
export function bucketIndexOf(v: number): number {
  return logLinearIndex(v, SUB_BITS);
}

/** The bucket of a time in µs, floored and clamped to [0, MAX_TRACKABLE_US]: a lower bound stays one. */
export function bucketOfUs(us: number): number {
  return bucketIndexOf(Math.min(Math.max(Math.floor(us), 0), MAX_TRACKABLE_US));
}

const ALL_BUCKETS = bucketIndexOf(MAX_TRACKABLE_US) + 1;
const TABLE: BucketTable = {
  lowUs: Float64Array.from({ length: ALL_BUCKETS }, (_, i) => logLinearLow(i, SUB_BITS)),
  widthUs: Float64Array.from({ length: ALL_BUCKETS }, (_, i) => logLinearWidth(i, SUB_BITS)),
};

/**
 * A sliding-window latency histogram: the window's samples as 16-bit bucket indices in arrival order (a
 * {@link SlotFifo}, at most `maxSamples`, the newest kept) and their counts in a 16-bit Fenwick tree, so
 * "samples at or below bucket k" is O(log buckets) and a CDF is read without a rebuild per sample. A new
 * slice of `windowMs / slices` pops the samples that fell out; rotation follows the `now` passed in (no
 * timers), the same on a system and a simulated clock.
 *
 * A quantile read inside a bucket is within 1.6 % of the exact sample quantile (64 sub-buckets per power
 * of two). A sample counts for between `windowMs − windowMs/slices` and `windowMs` (longer in a ring of
 * more `slots`, until its owner drops it: `keepFrom`), or until `maxSamples`
 * newer ones arrive (≤ 65,535, so 16-bit counters cannot overflow). Values are integer µs, clamped to
 * `[1, highestTrackableUs]`.
 *
 * @example
 * const w = new WindowedHistogram(10_000, 6, 60e6, 1024);
 * w.record(12_500, clock.now()); // 12.5 ms
 * w.valueAtPercentile(99, clock.now()); // µs
 */
export class WindowedHistogram extends SliceRing {
  /** Value range of every bucket index. */
  readonly table: BucketTable = TABLE;
  readonly buckets: number;
  private readonly samples: SlotFifo;
  /** Fenwick tree over bucket counts (1-based): the live samples. */
  private readonly tree: Uint16Array;
  /** Largest power of two <= buckets (the Fenwick descent's first step). */
  private readonly topBit: number;
  private readonly highestUs: number;
  private total = 0;
  /** Bumped whenever the window's content changes (record, eviction, reset). */
  version = 0;

  constructor(
    windowMs: number,
    slices: number,
    highestTrackableUs: number,
    maxSamples = 1024,
    slots = slices,
  ) {
    super(windowMs, slices, slots);
    this.highestUs = Math.max(1, Math.min(Math.floor(highestTrackableUs), MAX_TRACKABLE_US));
    this.buckets = bucketIndexOf(this.highestUs) + 1;
    this.tree = new Uint16Array(this.buckets + 1);
    this.topBit = 1 << (31 - Math.clz32(this.buckets));
    this.samples = new SlotFifo(maxSamples, this.slots);
  }

  /** Samples in the window as of the last `advance`/`record`. */
  get totalCount(): number {
    return this.total;
  }

  /** Samples dropped because the window already held `maxSamples` (the oldest go first). */
  get dropped(): number {
    return this.samples.dropped;
  }

  /** Records one value (µs) at clock time `nowMs`. */
  record(valueUs: number, nowMs: number): void {
    if (nowMs >= (this.epoch + 1) * this.sliceMs) this.advance(nowMs);
    let v = Math.round(valueUs);
    if (!(v >= 1))
      v = 1; // also catches NaN
    else if (v > this.highestUs) v = this.highestUs;
    const idx = bucketIndexOf(v);
    const out = this.samples.push(idx, this.slot, (this.slot + 1) % this.slots);
    if (out >= 0) this.add(out, -1);
    else this.total++;
    this.add(idx, 1);
    this.version++;
  }

  /**
   * The oldest slice number to keep so that the window holds at least `n` samples: its own `slices`, and
   * of the older slices held (`slots` > `slices`) as few, newest first, as bring the count to `n` — all of
   * them when it stays short. `dropBefore` it.
   */
  keepFrom(n: number): number {
    let count = this.total;
    let e = this.epoch - this.slots + 1;
    const own = this.epoch - this.slices + 1;
    for (; e < own; e++) {
      const c = this.samples.countOf(this.slotOf(e));
      if (count - c < n) break;
      count -= c;
    }
    return e;
  }

  /** Samples in buckets 0..k of the window (0 for k < 0). */
  countAtOrBelow(k: number): number {
    const tree = this.tree;
    let sum = 0;
    for (let i = Math.min(k, this.buckets - 1) + 1; i > 0; i -= i & -i) sum += tree[i] as number;
    return sum;
  }

  /**
   * Samples in bucket k: the node's own count less the nodes it covers below k (a Fenwick point query,
   * O(1) on average, where two prefix queries would cost 2 log B).
   */
  countAt(k: number): number {
    if (k < 0 || k >= this.buckets) return 0;
    const tree = this.tree;
    const i = k + 1;
    let count = tree[i] as number;
    const stop = i - (i & -i);
    for (let j = i - 1; j > stop; j -= j & -j) count -= tree[j] as number;
    return count;
  }

  /** Highest non-empty bucket of the window (−1 when empty). */
  highBucket(): number {
    return this.total === 0 ? -1 : this.bucketOfRank(this.total);
  }

  /** Lowest and highest non-empty bucket of the window (lo > hi when empty). */
  range(): { lo: number; hi: number } {
    if (this.total === 0) return { lo: 0x7fffffff, hi: -1 };
    return { lo: this.bucketOfRank(1), hi: this.bucketOfRank(this.total) };
  }

  /** HDR-style percentile over the window: the highest value equivalent to the rank's bucket (µs); 0 when empty. */
  valueAtPercentile(percentile: number, nowMs: number): number {
    this.advance(nowMs);
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil((Math.min(percentile, 100) / 100) * this.total - 1e-9));
    const a = this.bucketOfRank(rank);
    return (TABLE.lowUs[a] as number) + (TABLE.widthUs[a] as number) - 1;
  }

  /** Heap bytes: the tree, the sample ring and the object (`footprint.ts`). */
  get estimatedFootprintInBytes(): number {
    return arrayBytes(this.tree.byteLength, 1, 1) + this.samples.estimatedFootprintInBytes + 144;
  }

  protected override evict(s: number): void {
    const n = this.samples.countOf(s);
    if (n === 0) return;
    this.samples.popSlot(s, (idx) => this.add(idx, -1));
    this.total -= n;
    this.version++;
  }

  protected override clearAll(): void {
    this.samples.clear();
    this.tree.fill(0);
    this.total = 0;
    this.version++;
  }

  /** Smallest bucket k with countAtOrBelow(k) >= rank (rank in [1, total]): a Fenwick descent. */
  private bucketOfRank(rank: number): number {
    const tree = this.tree;
    const n = this.buckets;
    let pos = 0;
    let left = rank;
    for (let step = this.topBit; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= n && (tree[next] as number) < left) {
        pos = next;
        left -= tree[next] as number;
      }
    }
    return pos; // 1-based pos + 1 is the bucket's tree index, so the bucket is `pos`
  }

  private add(idx: number, delta: number): void {
    const tree = this.tree;
    const n = this.buckets;
    for (let i = idx + 1; i <= n; i += i & -i) tree[i] = (tree[i] as number) + delta;
  }
}
