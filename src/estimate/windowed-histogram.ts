import { build, JsHistogram } from "hdr-histogram-js";
import { SliceRing } from "./slice-ring.js";

/** Settings measured on this project's machines (DESIGN.md): JS mode, 32-bit counts, 2 digits, 1 µs–60 s. */
function newHistogram(highestTrackableUs: number): JsHistogram {
  const h = build({
    bitBucketSize: 32,
    numberOfSignificantValueDigits: 2,
    lowestDiscernibleValue: 1,
    highestTrackableValue: highestTrackableUs,
    autoResize: false,
    useWebAssembly: false,
  });
  if (!(h instanceof JsHistogram)) throw new Error("hdr-histogram-js built a non-JS histogram in JS mode");
  return h;
}

/**
 * Value range of every counts-array index of the histograms built by {@link newHistogram}: samples counted
 * at index `i` lie in `[lowUs[i], lowUs[i] + widthUs[i])`. Shared by every peer of the same configuration.
 */
export interface BucketTable {
  readonly lowUs: Float64Array;
  readonly widthUs: Float64Array;
}

const tables = new Map<number, BucketTable>();

function bucketTable(h: JsHistogram): BucketTable {
  let t = tables.get(h.countsArrayLength);
  if (t === undefined) {
    const n = h.countsArrayLength;
    const lowUs = new Float64Array(n);
    const widthUs = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const v = h.valueFromIndex(i);
      lowUs[i] = v;
      widthUs[i] = h.sizeOfEquivalentValueRange(v);
    }
    t = { lowUs, widthUs };
    tables.set(h.countsArrayLength, t);
  }
  return t;
}

/** Values (µs) of at most 2^31 − 1 use the bit arithmetic below; the options cap the range well under it. */
export const MAX_TRACKABLE_US = 0x7fffffff;

/**
 * HDR's counts-array index for 2 significant digits and a 1 µs unit (sub-bucket half count 128), with clz32
 * instead of log2/pow: bucket b = max(0, floor(log2 v) − 7), index = (b + 1)·128 + (v >> b) − 128.
 * `v` is an integer in [0, 2^31).
 */
export function bucketIndexOf(v: number): number {
  const b = Math.max(0, 24 - Math.clz32(v));
  return (b << 7) + (v >>> b);
}

/**
 * A sliding-window HDR histogram: a ring of `slices` sub-window HDR histograms of `windowMs / slices` each,
 * plus a running sum of the live slices. A sample is recorded into the current slice and the sum; when the
 * clock passes into a new slice, the evicted slice is subtracted from the sum and cleared. Rotation is driven
 * by the `now` passed in (no timers), so it runs the same on the system clock and on a simulated one.
 *
 * The running sum is kept over the same HDR buckets but as a Fenwick (binary indexed) tree rather than a
 * second HDR histogram: same memory (one 32-bit count per bucket), and "how many samples at or below bucket
 * k" costs O(log buckets) instead of a walk over the buckets, which is what lets a peer's CDF be evaluated
 * without rebuilding it after every sample (see `CensoredCdf`).
 *
 * A sample counts for between `windowMs − windowMs/slices` and `windowMs` of clock time, within the
 * contract's staleness bound `windowMs · (1 + 1/slices)`. Values are integer µs, clamped to
 * `[1, highestTrackableUs]`. Memory at 6 slices and 60 s: 7 × 10 KiB of counts plus object overhead.
 *
 * @example
 * const w = new WindowedHistogram(10_000, 6, 60e6);
 * w.record(12_500, clock.now()); // 12.5 ms
 * w.valueAtPercentile(99, clock.now()); // µs
 */
export class WindowedHistogram extends SliceRing {
  /** Value range of every bucket index. */
  readonly table: BucketTable;
  readonly buckets: number;
  private readonly ring: JsHistogram[];
  private readonly ringMin: Int32Array;
  private readonly ringMax: Int32Array;
  private readonly ringCount: Float64Array;
  /** Fenwick tree over bucket counts (1-based): the running sum of the live slices. */
  private readonly tree: Uint32Array;
  private readonly highestUs: number;
  private total = 0;
  /** Bumped whenever the window's content changes (record, eviction, reset). */
  version = 0;

  constructor(windowMs: number, slices: number, highestTrackableUs: number) {
    super(windowMs, slices);
    this.highestUs = Math.min(Math.floor(highestTrackableUs), MAX_TRACKABLE_US);
    this.ring = Array.from({ length: slices }, () => newHistogram(this.highestUs));
    const first = this.ring[0] as JsHistogram;
    if (first.subBucketHalfCount !== 128 || first.unitMagnitude !== 0) {
      throw new Error("WindowedHistogram assumes 2 significant digits and a 1 µs unit");
    }
    this.table = bucketTable(first);
    this.buckets = first.countsArrayLength;
    this.tree = new Uint32Array(this.buckets + 1);
    this.ringMin = new Int32Array(slices).fill(0x7fffffff);
    this.ringMax = new Int32Array(slices).fill(-1);
    this.ringCount = new Float64Array(slices);
  }

  /** Samples in the window as of the last `advance`/`record`. */
  get totalCount(): number {
    return this.total;
  }

  /** Records one value (µs) at clock time `nowMs`. */
  record(valueUs: number, nowMs: number): void {
    if (nowMs >= (this.epoch + 1) * this.sliceMs) this.advance(nowMs);
    let v = Math.round(valueUs);
    if (!(v >= 1))
      v = 1; // also catches NaN
    else if (v > this.highestUs) v = this.highestUs;
    const idx = bucketIndexOf(v);
    const s = this.slot;
    const h = this.ring[s] as JsHistogram;
    h.incrementCountAtIndex(idx);
    h.incrementTotalCount();
    const tree = this.tree;
    const n = this.buckets;
    for (let i = idx + 1; i <= n; i += i & -i) tree[i] = (tree[i] as number) + 1;
    this.total++;
    this.ringCount[s] = (this.ringCount[s] as number) + 1;
    if (idx < (this.ringMin[s] as number)) this.ringMin[s] = idx;
    if (idx > (this.ringMax[s] as number)) this.ringMax[s] = idx;
    this.version++;
  }

  /** Samples in buckets 0..k of the window (0 for k < 0). */
  countAtOrBelow(k: number): number {
    const tree = this.tree;
    let sum = 0;
    for (let i = Math.min(k, this.buckets - 1) + 1; i > 0; i -= i & -i) sum += tree[i] as number;
    return sum;
  }

  /** Samples in bucket k. */
  countAt(k: number): number {
    return this.countAtOrBelow(k) - this.countAtOrBelow(k - 1);
  }

  /** Highest non-empty bucket of the window (−1 when empty); `range().hi` without the allocation. */
  highBucket(): number {
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) !== 0 && (this.ringMax[s] as number) > hi)
        hi = this.ringMax[s] as number;
    }
    return hi;
  }

  /** Lowest and highest non-empty bucket of the window (lo > hi when empty). */
  range(): { lo: number; hi: number } {
    let lo = 0x7fffffff;
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) === 0) continue;
      lo = Math.min(lo, this.ringMin[s] as number);
      hi = Math.max(hi, this.ringMax[s] as number);
    }
    return { lo, hi };
  }

  /** HDR-style percentile over the window: the highest value equivalent to the rank's bucket (µs); 0 when empty. */
  valueAtPercentile(percentile: number, nowMs: number): number {
    this.advance(nowMs);
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil((Math.min(percentile, 100) / 100) * this.total - 1e-9));
    const { lo, hi } = this.range();
    let a = lo;
    let b = hi;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (this.countAtOrBelow(mid) >= rank) b = mid;
      else a = mid + 1;
    }
    return (this.table.lowUs[a] as number) + (this.table.widthUs[a] as number) - 1;
  }

  /** Approximate bytes held: the slices' counts, the tree and per-histogram overhead. */
  get estimatedFootprintInBytes(): number {
    return this.slices * (this.ring[0] as JsHistogram).estimatedFootprintInBytes + this.tree.byteLength + 256;
  }

  protected override evict(s: number): void {
    const n = this.ringCount[s] as number;
    if (n === 0) return;
    const h = this.ring[s] as JsHistogram;
    const tree = this.tree;
    const size = this.buckets;
    const hi = this.ringMax[s] as number;
    for (let k = this.ringMin[s] as number; k <= hi; k++) {
      const c = h.getCountAtIndex(k);
      if (c > 0) for (let i = k + 1; i <= size; i += i & -i) tree[i] = (tree[i] as number) - c;
    }
    this.total -= n;
    h.reset();
    this.ringCount[s] = 0;
    this.ringMin[s] = 0x7fffffff;
    this.ringMax[s] = -1;
    this.version++;
  }

  protected override clearAll(): void {
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) > 0) (this.ring[s] as JsHistogram).reset();
      this.ringCount[s] = 0;
      this.ringMin[s] = 0x7fffffff;
      this.ringMax[s] = -1;
    }
    this.tree.fill(0);
    this.total = 0;
    this.version++;
  }
}
