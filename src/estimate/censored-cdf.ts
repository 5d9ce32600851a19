import type { CdfLike } from "./fanout.js";
import { bucketIndexOf, MAX_TRACKABLE_US } from "./windowed-histogram.js";
import type { BucketTable, WindowedHistogram } from "./windowed-histogram.js";

/**
 * A peer's latency CDF from the window's completed samples and the calls still in flight, treating
 * each in-flight call as a right-censored observation: its latency is known only to exceed its current age.
 *
 * The estimator is Kaplan–Meier over HDR buckets (equivalently Efron's "redistribute to the right"):
 * walking the buckets upwards, a censored call is in the risk set for every bucket at or below its age and
 * leaves it afterwards, so its probability mass is shared among the longer latencies that remain possible.
 * Calls still in flight beyond the last completed bucket keep their mass as a point at their age (a lower
 * bound: the tail is *at least* this long now).
 *
 * Why this and not "treat the age as a sample": a call that started 1 ms ago would then count as a 1 ms
 * sample and pull every quantile down, which a lower bound must never do. Kaplan–Meier never lowers a
 * quantile: adding a censored observation at age c raises the risk set n_j of every bucket at or below c, so
 * each survival factor (1 − d_j / n_j) grows or stays, and S(t) = Π (1 − d_j / n_j) grows or stays for every
 * t (ties at HDR resolution are resolved events-first, which keeps the argument). Hence every quantile with
 * the in-flight calls is >= the quantile of the completed samples alone. It also removes the bias of a
 * completed-only window during a slowdown (the slow calls have not completed yet, so the window holds only
 * the fast ones), and a stall shows immediately: k calls pending for 300 ms among n recent completions put
 * at least k / (n + k) of the mass at >= 300 ms, so p99 reaches 300 ms once k / (n + k) > 1 %.
 * It assumes censoring independent of latency, which holds here: calls are censored by "now", not by speed.
 *
 * Within a bucket the mass is spread uniformly over the bucket's value range (HDR resolution, 1 %).
 *
 * Cost: nothing is rebuilt per sample. With R(k) the completed samples in buckets >= k (a prefix query on
 * the window's Fenwick tree) and C censored calls in the risk set, the Kaplan–Meier factors telescope over
 * every run of buckets with the same C: Π (1 − d_j / (R(j) + C)) = (R(end + 1) + C) / (R(start) + C). So
 * `update` costs O(m log m + m log B) for m calls in flight and B buckets, and `at(t)` two prefix queries.
 *
 * @example
 * const cdf = new CensoredCdf();
 * cdf.update(window, sortedAgesMs, count);
 * cdf.at(250); // P(latency <= 250 ms), in-flight calls counted as ">= their age"
 * cdf.quantile(0.99);
 */
export class CensoredCdf implements CdfLike {
  private window: WindowedHistogram | undefined;
  private table: BucketTable | undefined;
  private total = 0;
  /** Lowest and highest bucket holding a completed sample (lo > hi when none). */
  private lo = 0;
  private hi = -1;
  /** Censored calls: m of them; bucket index of each, sorted; per segment s its start bucket a_s, R(a_s) and S before a_s. */
  private m = 0;
  private beta = new Int32Array(8);
  private segStart = new Int32Array(9);
  private segR = new Float64Array(9);
  private segS = new Float64Array(9);
  /** The tail beyond the last completed bucket: survival there, and the points (ms) sharing it. */
  private tailS = 0;
  private tailX = new Float64Array(8);
  private tailCount = 0;
  private hiEdgeMs = 0;
  /** True when there is nothing: no completed sample and no call in flight. */
  empty = true;

  /**
   * Recomputes from the window's completed samples and the ages (ms, sorted ascending) of the calls in flight.
   * The window must not change while this CDF is read.
   */
  update(window: WindowedHistogram, agesMs: Float64Array, count: number): void {
    this.window = window;
    this.table = window.table;
    this.total = window.totalCount;
    const { lo, hi } = window.range();
    this.lo = lo;
    this.hi = hi;
    const m = count;
    this.m = m;
    this.empty = this.total === 0 && m === 0;
    if (this.beta.length < m) {
      const size = Math.max(m, this.beta.length * 2);
      this.beta = new Int32Array(size);
      this.segStart = new Int32Array(size + 1);
      this.segR = new Float64Array(size + 1);
      this.segS = new Float64Array(size + 1);
      this.tailX = new Float64Array(size);
    }
    for (let i = 0; i < m; i++) {
      const us = Math.min(Math.max(Math.floor((agesMs[i] as number) * 1000), 0), MAX_TRACKABLE_US);
      this.beta[i] = bucketIndexOf(us);
    }
    // segments: s = 0..m, bucket run [a_s, beta_s] (beta_m = ∞) with C_s = m − s calls in the risk set
    let survival = 1;
    let start = 0;
    for (let s = 0; s <= m; s++) {
      const c = m - s;
      const rStart = this.total - window.countAtOrBelow(start - 1);
      this.segStart[s] = start;
      this.segR[s] = rStart;
      this.segS[s] = survival;
      if (s < m) {
        const end = Math.max(this.beta[s] as number, start - 1);
        const rEnd = this.total - window.countAtOrBelow(end);
        survival *= (rEnd + c) / (rStart + c);
        start = end + 1;
      }
    }
    // tail: calls in flight at or beyond the last completed bucket share the survival left there
    this.hiEdgeMs =
      hi >= 0 ? ((this.table.lowUs[hi] as number) + (this.table.widthUs[hi] as number)) / 1000 : 0;
    this.tailS = hi >= 0 ? this.survivalAfter(hi) : 1;
    let n = 0;
    for (let i = 0; i < m; i++) {
      if ((this.beta[i] as number) >= hi)
        this.tailX[n++] = Math.max(agesMs[i] as number, this.hiEdgeMs, 0.001);
    }
    this.tailCount = n;
    if (n === 0) this.tailS = 0;
  }

  /** Survival after bucket k: P(latency beyond bucket k). */
  private survivalAfter(k: number): number {
    if (k < this.lo) return 1;
    const m = this.m;
    // segment: number of censored calls with beta < k  (beta sorted)
    let a = 0;
    let b = m;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.beta[mid] as number) < k) a = mid + 1;
      else b = mid;
    }
    const s = a;
    const c = m - s;
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
    return a === n ? 1 : 1 - this.tailS + (this.tailS * a) / n;
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
    const n = this.tailCount;
    const j = Math.min(n, Math.max(1, Math.ceil(((q - reached) / this.tailS) * n - 1e-9)));
    return this.tailX[j - 1] as number;
  }
}
