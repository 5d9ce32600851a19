/**
 * Right-censored observations of *ended* calls ("latency > age": the call ended without an answer after
 * `age` — cut at its deadline, or abandoned because the caller stopped waiting), kept in the same sliding
 * window as the completed samples.
 *
 * Layout. The same ring design as {@link WindowedHistogram}: `slices` sub-window count arrays; a value is
 * counted into the current slice, and when the clock passes into a new slice the evicted slice is cleared.
 * The slot arithmetic is the same (`epoch = floor(now / sliceMs)`, absolute), so a censored observation and
 * a completed sample recorded at the same clock time leave the window at the same moment, whatever order
 * the two windows are advanced in.
 *
 * Resolution. Counts are kept over coarse log-linear buckets (32 sub-buckets per power of two: 3–6 % wide)
 * instead of HDR's 2 significant digits. Each slice also keeps, per bucket, the smallest value recorded in
 * it (as a fraction of the bucket's width, rounded down to 1/256), and a bucket is read as one point at the
 * smallest value of its live slices. Every observation of the bucket is at least that value, so the point
 * is a lower bound for all of them — the estimate never claims more than was observed — and it is exact to
 * 0.025 % for the common case of many calls cut at one deadline (the horizon a coordinator decides at).
 * The buckets stop at the configured highest trackable value (≈ 370 buckets at 60 s), and the arrays are
 * allocated on the first censored end, so a peer that never has a call cut costs nothing here and one that
 * has costs ≈ 6.7 KiB at 6 slices and 60 s (the completed window costs ≈ 70 KiB): a 16-bit count and an
 * 8-bit fraction per slice and bucket. A slice bucket that would pass 65,535 (that many cut calls of one
 * peer within 3 % of the same age in one slice) drops the further ones rather than wrap.
 *
 * Recording is O(1): an increment, a min and a min/max. Reading enumerates the live slices' buckets between
 * their lowest and highest one, once per change (the pairs are kept until the next record or eviction).
 *
 * @example
 * const ended = new WindowedCensored(10_000, 6, 60e6);
 * ended.record(35_000, clock.now()); // a call cut after 35 ms: its latency is > 35 ms
 * const n = ended.read(agesMs, weights); // ascending lower bounds (ms) and counts
 */
import { SliceRing } from "./slice-ring.js";

const SUB_BITS = 5; // 32 sub-buckets per power of two
const HALF = 1 << (SUB_BITS - 1); // 16
const SHIFT_BASE = 31 - SUB_BITS + 1; // 27: b = max(0, floor(log2 v) − (SUB_BITS − 1))
/** Steps of a bucket's width the smallest value is kept in (8 bits). */
const FRACTION_STEPS = 256;

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

/** Width (µs) of coarse bucket `i`. */
export function coarseWidthOf(i: number): number {
  return i < 2 * HALF ? 1 : Math.pow(2, (i >>> (SUB_BITS - 1)) - 1);
}

const BUCKETS_31_BITS = coarseIndexOf(0x7fffffff) + 1;

/** Lower edge and width (µs) of every coarse bucket of a 31-bit value, computed once (the read path's lookup). */
const LOW_US: Float64Array = Float64Array.from({ length: BUCKETS_31_BITS }, (_, i) => coarseLowOf(i));
const WIDTH_US: Float64Array = Float64Array.from({ length: BUCKETS_31_BITS }, (_, i) => coarseWidthOf(i));

export class WindowedCensored extends SliceRing {
  /** Buckets per slice (index of the highest trackable value + 1). */
  readonly buckets: number;
  private readonly highestUs: number;
  /** slices × buckets counts (slice s at s × buckets), and the smallest value's fraction of its bucket. */
  private counts: Uint16Array | undefined;
  private fractions: Uint8Array | undefined;
  private readonly ringMin: Int32Array;
  private readonly ringMax: Int32Array;
  private readonly ringCount: Float64Array;
  private total = 0;
  /** The window's (lower bound ms, count) pairs as of `pairsVersion`. */
  private pairX: Float64Array = new Float64Array(0);
  private pairW: Float64Array = new Float64Array(0);
  private pairN = 0;
  private pairsVersion = -1;
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
    const fractions = (this.fractions ??= new Uint8Array(this.slices * n));
    const s = this.slot;
    const at = s * n + idx;
    const c = counts[at] as number;
    if (c === 0xffff) return;
    const fraction = Math.min(
      FRACTION_STEPS - 1,
      Math.floor(((v - (LOW_US[idx] as number)) * FRACTION_STEPS) / (WIDTH_US[idx] as number)),
    );
    if (c === 0 || fraction < (fractions[at] as number)) fractions[at] = fraction;
    counts[at] = c + 1;
    this.total++;
    this.ringCount[s] = (this.ringCount[s] as number) + 1;
    if (idx < (this.ringMin[s] as number)) this.ringMin[s] = idx;
    if (idx > (this.ringMax[s] as number)) this.ringMax[s] = idx;
    this.version++;
  }

  /**
   * Writes the window's censored observations as (lower bound in ms, count) pairs in ascending order into
   * `agesMs`/`weights` from index `offset` on (the caller sizes them: at most `distinctBound()` pairs).
   * Returns how many pairs were written. Call `advance` first.
   */
  read(agesMs: Float64Array, weights: Float64Array, offset = 0): number {
    if (this.total === 0) return 0;
    this.materialize();
    const n = this.pairN;
    const x = this.pairX;
    const w = this.pairW;
    for (let k = 0; k < n; k++) {
      agesMs[offset + k] = x[k] as number;
      weights[offset + k] = w[k] as number;
    }
    return n;
  }

  /** The number of pairs `read` writes. */
  distinctBound(): number {
    if (this.total === 0) return 0;
    this.materialize();
    return this.pairN;
  }

  /** Approximate bytes held (0 of counts until the first censored end). */
  get estimatedFootprintInBytes(): number {
    return (
      (this.counts?.byteLength ?? 0) +
      (this.fractions?.byteLength ?? 0) +
      this.pairX.byteLength +
      this.pairW.byteLength +
      this.slices * 16 +
      128
    );
  }

  protected override evict(s: number): void {
    const n = this.ringCount[s] as number;
    if (n === 0) return;
    const counts = this.counts as Uint16Array;
    const size = this.buckets;
    counts.fill(0, s * size + (this.ringMin[s] as number), s * size + (this.ringMax[s] as number) + 1);
    this.total -= n;
    this.ringCount[s] = 0;
    this.ringMin[s] = 0x7fffffff;
    this.ringMax[s] = -1;
    this.version++;
  }

  protected override clearAll(): void {
    this.counts?.fill(0);
    this.ringCount.fill(0);
    this.ringMin.fill(0x7fffffff);
    this.ringMax.fill(-1);
    this.total = 0;
    this.version++;
  }

  /** Sums the live slices per bucket into the pairs, once per version. */
  private materialize(): void {
    if (this.pairsVersion === this.version) return;
    this.pairsVersion = this.version;
    const counts = this.counts as Uint16Array;
    const fractions = this.fractions as Uint8Array;
    const size = this.buckets;
    let lo = 0x7fffffff;
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) === 0) continue;
      lo = Math.min(lo, this.ringMin[s] as number);
      hi = Math.max(hi, this.ringMax[s] as number);
    }
    const bound = Math.min(this.total, hi - lo + 1);
    if (this.pairX.length < bound) {
      const length = Math.max(bound, this.pairX.length * 2, 4);
      this.pairX = new Float64Array(length);
      this.pairW = new Float64Array(length);
    }
    let k = 0;
    for (let i = lo; i <= hi; i++) {
      let c = 0;
      let fraction = FRACTION_STEPS;
      for (let s = 0; s < this.slices; s++) {
        const at = s * size + i;
        const cs = counts[at] as number;
        if (cs === 0) continue;
        c += cs;
        if ((fractions[at] as number) < fraction) fraction = fractions[at] as number;
      }
      if (c === 0) continue;
      this.pairX[k] = ((LOW_US[i] as number) + (fraction * (WIDTH_US[i] as number)) / FRACTION_STEPS) / 1000;
      this.pairW[k] = c;
      k++;
    }
    this.pairN = k;
  }
}
