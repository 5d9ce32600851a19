import type { CdfLike } from "./fanout.js";
import { bucketIndexOf, MAX_TRACKABLE_US } from "./windowed-histogram.js";
import type { BucketTable, WindowedHistogram } from "./windowed-histogram.js";
import type { WindowedCensored } from "./windowed-censored.js";

/**
 * Scratch of `update` only (the merged censoring points before they are reduced to buckets, and the
 * ended-censored pairs before the merge): shared by every CDF, since `update` runs to completion
 * synchronously, so that a peer keeps only what its reads need.
 */
let scratchX: Float64Array = new Float64Array(64);
let scratchW: Float64Array = new Float64Array(64);
let scratchEndX: Float64Array = new Float64Array(64);
let scratchEndW: Float64Array = new Float64Array(64);
/** 1 where the merged censoring point is an ended call's, 0 where it is a call in flight. */
let scratchEnded: Uint8Array = new Uint8Array(64);

function grown(a: Float64Array, n: number): Float64Array {
  return a.length >= n ? a : new Float64Array(Math.max(n, a.length * 2));
}

/**
 * A peer's latency CDF from the window's completed samples and its right-censored observations (calls in
 * flight at their age, calls that ended unanswered at their age then): Kaplan–Meier over the histogram's
 * buckets, mass spread uniformly within a bucket. Censored observations beyond the last completed bucket
 * keep their mass as points at their censoring times: lower bounds, the tail is at least that long.
 *
 * Why not take an age as a sample: a call 1 ms old would pull every quantile down. Adding a censored
 * observation only raises risk sets, so no quantile drops below the completed-only one, and a stall shows
 * at once (k calls pending at 300 ms among n completions put k / (n + k) of the mass at >= 300 ms). It
 * assumes censoring independent of latency: calls are cut by "now", a deadline, a caller's abort or other
 * peers' answers, never by their own speed. Nothing is rebuilt per sample: the factors telescope over
 * runs of buckets with the same censored weight, so `update` is O(m log B) for m censoring points and
 * `at(t)` is two prefix queries on the window's Fenwick tree.
 *
 * @example
 * const cdf = new CensoredCdf();
 * cdf.update(window, sortedAgesMs, count, endedCensored);
 * cdf.at(250); // P(latency <= 250 ms), censored calls counted as ">= their age"
 * cdf.quantile(0.99);
 */
export class CensoredCdf implements CdfLike {
  private window: WindowedHistogram | undefined;
  private table: BucketTable | undefined;
  private total = 0;
  /** Lowest and highest bucket holding a completed sample (lo > hi when none). */
  private lo = 0;
  private hi = -1;
  /**
   * Censored observations (calls in flight and ended-censored calls) merged in ascending order of their
   * censoring time: m entries, each with its HDR bucket index; per segment s: R(a_s) at its start bucket
   * a_s, S before a_s and C_s, the censored weight still in the risk set.
   */
  private m = 0;
  private beta = new Int32Array(8);
  private segR = new Float64Array(9);
  private segS = new Float64Array(9);
  private segC = new Float64Array(9);
  /** The tail beyond the last completed bucket: survival there, the points (ms) sharing it and their cumulative weights. */
  private tailS = 0;
  private tailX = new Float64Array(8);
  private tailCum = new Float64Array(8);
  private tailCount = 0;
  private hiEdgeMs = 0;
  /** Weight of the ended-censored observations in the tail (calls in flight not counted). */
  private endedTail = 0;
  /** True when there is nothing: no completed sample and no censored observation. */
  empty = true;

  /**
   * Recomputes from the window's completed samples, the ages (ms, sorted ascending) of the calls in flight
   * and, when given, the ended calls' censored observations in the same window (`ended`, advanced to now by
   * the caller). The windows must not change while this CDF is read.
   */
  update(window: WindowedHistogram, agesMs: Float64Array, count: number, ended?: WindowedCensored): void {
    this.window = window;
    this.table = window.table;
    this.total = window.totalCount;
    const { lo, hi } = window.range();
    this.lo = lo;
    this.hi = hi;
    // merge the in-flight ages (weight 1 each) with the ended-censored pairs, both ascending
    let e = 0;
    if (ended !== undefined && ended.totalCount > 0) {
      const bound = ended.distinctBound();
      scratchEndX = grown(scratchEndX, bound);
      scratchEndW = grown(scratchEndW, bound);
      e = ended.read(scratchEndX, scratchEndW);
    }
    const endX = scratchEndX;
    const endW = scratchEndW;
    const m = count + e;
    this.m = m;
    this.empty = this.total === 0 && m === 0;
    if (this.beta.length < m) {
      const size = Math.max(m, this.beta.length * 2);
      this.beta = new Int32Array(size);
      this.segR = new Float64Array(size + 1);
      this.segS = new Float64Array(size + 1);
      this.segC = new Float64Array(size + 1);
      this.tailX = new Float64Array(size);
      this.tailCum = new Float64Array(size);
    }
    const cx = (scratchX = grown(scratchX, m));
    const cw = (scratchW = grown(scratchW, m));
    if (scratchEnded.length < m) scratchEnded = new Uint8Array(Math.max(m, scratchEnded.length * 2));
    const fromEnded = scratchEnded;
    {
      let i = 0;
      let j = 0;
      for (let k = 0; k < m; k++) {
        if (j >= e || (i < count && (agesMs[i] as number) <= (endX[j] as number))) {
          cx[k] = Math.max(agesMs[i++] as number, 0);
          cw[k] = 1;
          fromEnded[k] = 0;
        } else {
          cx[k] = endX[j] as number;
          cw[k] = endW[j++] as number;
          fromEnded[k] = 1;
        }
      }
    }
    let weight = 0;
    for (let i = m - 1; i >= 0; i--) {
      const us = Math.min(Math.max(Math.floor((cx[i] as number) * 1000), 0), MAX_TRACKABLE_US);
      this.beta[i] = bucketIndexOf(us);
      weight += cw[i] as number;
      this.segC[i] = weight;
    }
    this.segC[m] = 0;
    // segments: s = 0..m, bucket run [a_s, beta_s] (beta_m = ∞) with C_s censored weight in the risk set
    // (R at a segment's start is R after the previous one's end: one prefix query per segment)
    let survival = 1;
    let start = 0;
    let rStart = this.total;
    for (let s = 0; s <= m; s++) {
      const c = this.segC[s] as number;
      this.segR[s] = rStart;
      this.segS[s] = survival;
      if (s < m) {
        const end = Math.max(this.beta[s] as number, start - 1);
        const rEnd = end >= start ? this.total - window.countAtOrBelow(end) : rStart;
        survival *= (rEnd + c) / (rStart + c);
        start = end + 1;
        rStart = rEnd;
      }
    }
    // tail: censored observations at or beyond the last completed bucket share the survival left there,
    // each in proportion to its weight, as a point at its censoring time (a lower bound)
    this.hiEdgeMs =
      hi >= 0 ? ((this.table.lowUs[hi] as number) + (this.table.widthUs[hi] as number)) / 1000 : 0;
    this.tailS = hi >= 0 ? this.survivalAfter(hi) : 1;
    let n = 0;
    let cum = 0;
    let endedTail = 0;
    for (let i = 0; i < m; i++) {
      if ((this.beta[i] as number) >= hi) {
        cum += cw[i] as number;
        if (fromEnded[i] === 1) endedTail += cw[i] as number;
        this.tailX[n] = Math.max(cx[i] as number, this.hiEdgeMs, 0.001);
        this.tailCum[n++] = cum;
      }
    }
    this.tailCount = n;
    if (n === 0) this.tailS = 0;
    this.endedTail = endedTail;
  }

  /**
   * The horizon, ms: the smallest censoring time at or beyond the last completed observation (Infinity when
   * no censored observation lies there). Below it the CDF is the Kaplan–Meier estimate; from it on, the
   * censored tail mass counts as done at its censoring time although each of those calls is only known to
   * take longer, so the CDF there is too high and a quantile that falls there is a lower bound.
   */
  get horizonMs(): number {
    return this.tailCount > 0 ? (this.tailX[0] as number) : Infinity;
  }

  /**
   * True when `quantile(q)` falls in the censored tail beyond the last completed observation: the true
   * quantile is at least the value returned (up to HDR resolution), possibly much more.
   */
  lowerBound(q: number): boolean {
    if (this.empty) return false;
    return !(this.hi >= 0 && (q <= 1 - this.tailS || this.tailCount === 0));
  }

  /** Weight of the ended-censored observations (not calls in flight) at or beyond the last completed bucket. */
  get endedTailWeight(): number {
    return this.endedTail;
  }

  /** Survival after bucket k: P(latency beyond bucket k). */
  private survivalAfter(k: number): number {
    if (k < this.lo) return 1;
    const m = this.m;
    // segment: number of censored entries with beta < k  (beta sorted)
    let a = 0;
    let b = m;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.beta[mid] as number) < k) a = mid + 1;
      else b = mid;
    }
    const s = a;
    const c = this.segC[s] as number;
    const rStart = this.segR[s] as number;
    if (rStart + c === 0) return this.segS[s] as number;
    const rNext = this.total - (this.window as WindowedHistogram).countAtOrBelow(k);
    return ((this.segS[s] as number) * (rNext + c)) / (rStart + c);
  }

  get minX(): number {
    if (this.empty) return NaN;
    if (this.hi >= 0) return ((this.table as BucketTable).lowUs[this.lo] as number) / 1000;
    return this.tailX[0] as number;
  }

  get maxX(): number {
    if (this.empty) return NaN;
    return this.tailCount > 0 ? (this.tailX[this.tailCount - 1] as number) : this.hiEdgeMs;
  }

  /** P(latency <= tMs). */
  at(tMs: number): number {
    if (this.empty) return 0;
    if (this.hi >= 0 && tMs < this.hiEdgeMs) {
      const us = tMs * 1000;
      if (!(us >= 1)) return 0;
      const k = bucketIndexOf(Math.floor(us));
      if (k < this.lo) return 0;
      const table = this.table as BucketTable;
      const theta = (us - (table.lowUs[k] as number)) / (table.widthUs[k] as number);
      const before = 1 - this.survivalAfter(k - 1);
      const after = 1 - this.survivalAfter(k);
      return before + theta * (after - before);
    }
    const n = this.tailCount;
    if (n === 0) return 1;
    // points at or below t
    let a = 0;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.tailX[mid] as number) <= tMs) a = mid + 1;
      else b = mid;
    }
    if (a === n) return 1;
    const total = this.tailCum[n - 1] as number;
    return a === 0 ? 1 - this.tailS : 1 - this.tailS + (this.tailS * (this.tailCum[a - 1] as number)) / total;
  }

  /** Smallest t with P(latency <= t) >= q, for q in (0, 1]; NaN when empty. */
  quantile(q: number): number {
    if (this.empty) return NaN;
    const reached = 1 - this.tailS;
    if (this.hi >= 0 && (q <= reached || this.tailCount === 0)) {
      // smallest bucket k with 1 − S(after k) >= q
      let a = this.lo;
      let b = this.hi;
      while (a < b) {
        const mid = (a + b) >>> 1;
        if (1 - this.survivalAfter(mid) >= q) b = mid;
        else a = mid + 1;
      }
      const table = this.table as BucketTable;
      const before = 1 - this.survivalAfter(a - 1);
      const after = 1 - this.survivalAfter(a);
      const low = table.lowUs[a] as number;
      const width = table.widthUs[a] as number;
      const theta = after > before ? Math.min(1, Math.max(0, (q - before) / (after - before))) : 1;
      return (low + theta * width) / 1000;
    }
    // smallest tail point whose cumulative share reaches q
    const n = this.tailCount;
    const need = ((q - reached) / this.tailS) * (this.tailCum[n - 1] as number) - 1e-9;
    let a = 0;
    let b = n - 1;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.tailCum[mid] as number) >= need) b = mid;
      else a = mid + 1;
    }
    return this.tailX[a] as number;
  }
}
