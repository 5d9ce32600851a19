/**
 * Right-censored observations of *ended* calls ("latency > age": the caller stopped waiting after `age` and
 * the call ended without an answer), kept in the same sliding window as the completed samples.
 *
 * Layout. The same ring design as {@link WindowedHistogram}: `slices` sub-window count arrays plus a
 * running sum; a value is counted into the current slice and the sum, and when the clock passes into a new
 * slice the evicted slice is subtracted from the sum and cleared. The slot arithmetic is the same
 * (`epoch = floor(now / sliceMs)`, absolute), so a censored observation and a completed sample recorded at
 * the same clock time leave the window at the same moment, whatever order the two windows are advanced in.
 *
 * Resolution. Counts are kept over coarse log-linear buckets (32 sub-buckets per power of two: 3–6 % wide)
 * instead of HDR's 2 significant digits, and a value is rounded DOWN to its bucket's lower edge. Rounding
 * a censoring time down keeps it a lower bound (the call is known to have taken longer than the edge), so
 * the estimate never claims more than was observed; it loses at most 6 % of the bound. The buckets stop at
 * the configured highest trackable value (≈ 370 buckets at 60 s), and the arrays are allocated on the first
 * censored end, so a peer that never has a call abandoned costs nothing here and one that has costs
 * ≈ 6 KiB at 6 slices and 60 s (the completed window costs ≈ 70 KiB): 16-bit counts per slice and bucket,
 * 32-bit in the running sum. A slice bucket that would pass 65,535 (that many abandons of one peer within
 * 3 % of the same age in one slice) drops the further ones rather than wrap.
 *
 * Recording is O(1): two increments and a min/max. Reading enumerates the non-empty buckets of the sum
 * between its lowest and highest live bucket, in ascending order.
 *
 * @example
 * const ended = new WindowedCensored(10_000, 6, 60e6);
 * ended.record(35_000, clock.now()); // a call abandoned after 35 ms: its latency is > 35 ms
 * const n = ended.read(clock.now(), agesMs, weights); // ascending lower edges (ms) and counts
 */
import { SliceRing } from "./slice-ring.js";

const SUB_BITS = 5; // 32 sub-buckets per power of two
const HALF = 1 << (SUB_BITS - 1); // 16
const SHIFT_BASE = 31 - SUB_BITS + 1; // 27: b = max(0, floor(log2 v) − (SUB_BITS − 1))

/** Coarse bucket index of an integer value (µs) in [0, 2^31). */
export function coarseIndexOf(v: number): number {
  const b = Math.max(0, SHIFT_BASE - Math.clz32(v));
  return (b << (SUB_BITS - 1)) + (v >>> b);
}

/** Lower edge (µs) of coarse bucket `i`. */
export function coarseLowOf(i: number): number {
  if (i < 2 * HALF) return i;
  const b = (i >>> (SUB_BITS - 1)) - 1;
  return (i - (b << (SUB_BITS - 1))) * Math.pow(2, b);
}

/** Lower edge (ms) of every coarse bucket of a 31-bit value, computed once (the read path's lookup). */
const LOW_MS: Float64Array = (() => {
  const n = coarseIndexOf(0x7fffffff) + 1;
  const t = new Float64Array(n);
  for (let i = 0; i < n; i++) t[i] = coarseLowOf(i) / 1000;
  return t;
})();

export class WindowedCensored extends SliceRing {
  /** Buckets per slice (index of the highest trackable value + 1). */
  readonly buckets: number;
  private readonly highestUs: number;
  /** slices × buckets counts (slice s at s × buckets), and the running sum of the live slices. */
  private counts: Uint16Array | undefined;
  private sum: Uint32Array | undefined;
  private readonly ringMin: Int32Array;
  private readonly ringMax: Int32Array;
  private readonly ringCount: Float64Array;
  private total = 0;
  /** Bumped whenever the content changes (record, eviction, reset). */
  version = 0;

  constructor(windowMs: number, slices: number, highestTrackableUs: number) {
    super(windowMs, slices);
    this.highestUs = Math.max(1, Math.min(Math.floor(highestTrackableUs), 0x7fffffff));
    this.buckets = coarseIndexOf(this.highestUs) + 1;
    this.ringMin = new Int32Array(slices).fill(0x7fffffff);
    this.ringMax = new Int32Array(slices).fill(-1);
    this.ringCount = new Float64Array(slices);
  }

  /** Censored observations in the window as of the last `advance`/`record`. */
  get totalCount(): number {
    return this.total;
  }

  /** Records a call that ended without an answer after `ageUs` µs, at clock time `nowMs`. NaN is ignored. */
  record(ageUs: number, nowMs: number): void {
    if (Number.isNaN(ageUs)) return;
    if (nowMs >= (this.epoch + 1) * this.sliceMs) this.advance(nowMs);
    let v = Math.floor(ageUs); // down: a lower bound stays a lower bound
    if (!(v >= 0)) v = 0;
    else if (v > this.highestUs) v = this.highestUs;
    const idx = coarseIndexOf(v);
    const n = this.buckets;
    const counts = (this.counts ??= new Uint16Array(this.slices * n));
    const sum = (this.sum ??= new Uint32Array(n));
    const s = this.slot;
    const c = counts[s * n + idx] as number;
    if (c === 0xffff) return;
    counts[s * n + idx] = c + 1;
    sum[idx] = (sum[idx] as number) + 1;
    this.total++;
    this.ringCount[s] = (this.ringCount[s] as number) + 1;
    if (idx < (this.ringMin[s] as number)) this.ringMin[s] = idx;
    if (idx > (this.ringMax[s] as number)) this.ringMax[s] = idx;
    this.version++;
  }

  /**
   * Writes the window's censored observations as (lower edge in ms, count) pairs in ascending order into
   * `agesMs`/`weights` from index `offset` on (the caller sizes them: at most `distinctBound()` pairs).
   * Returns how many pairs were written. Call `advance` first.
   */
  read(agesMs: Float64Array, weights: Float64Array, offset = 0): number {
    const sum = this.sum;
    if (sum === undefined || this.total === 0) return 0;
    let lo = 0x7fffffff;
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) === 0) continue;
      lo = Math.min(lo, this.ringMin[s] as number);
      hi = Math.max(hi, this.ringMax[s] as number);
    }
    let k = offset;
    for (let i = lo; i <= hi; i++) {
      const c = sum[i] as number;
      if (c === 0) continue;
      agesMs[k] = LOW_MS[i] as number;
      weights[k] = c;
      k++;
    }
    return k - offset;
  }

  /** Upper bound on the pairs `read` writes. */
  distinctBound(): number {
    if (this.total === 0) return 0;
    let lo = 0x7fffffff;
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) === 0) continue;
      lo = Math.min(lo, this.ringMin[s] as number);
      hi = Math.max(hi, this.ringMax[s] as number);
    }
    return Math.min(this.total, hi - lo + 1);
  }

  /** Approximate bytes held (0 of counts until the first censored end). */
  get estimatedFootprintInBytes(): number {
    return (this.counts?.byteLength ?? 0) + (this.sum?.byteLength ?? 0) + this.slices * 16 + 128;
  }

  protected override evict(s: number): void {
    const n = this.ringCount[s] as number;
    if (n === 0) return;
    const counts = this.counts as Uint16Array;
    const sum = this.sum as Uint32Array;
    const size = this.buckets;
    const hi = this.ringMax[s] as number;
    for (let k = this.ringMin[s] as number; k <= hi; k++) {
      const c = counts[s * size + k] as number;
      if (c === 0) continue;
      sum[k] = (sum[k] as number) - c;
      counts[s * size + k] = 0;
    }
    this.total -= n;
    this.ringCount[s] = 0;
    this.ringMin[s] = 0x7fffffff;
    this.ringMax[s] = -1;
    this.version++;
  }

  protected override clearAll(): void {
    this.counts?.fill(0);
    this.sum?.fill(0);
    this.ringCount.fill(0);
    this.ringMin.fill(0x7fffffff);
    this.ringMax.fill(-1);
    this.total = 0;
    this.version++;
  }
}
