import type { CdfLike } from "./fanout.js";
import { arrayBytes } from "./footprint.js";
import { bucketIndexOf, bucketOfUs } from "./windowed-histogram.js";
import type { BucketTable, WindowedHistogram } from "./windowed-histogram.js";
import type { WindowedCensored } from "./windowed-censored.js";
import { medianAbove } from "./median-bound.js";

/**
 * Scratch of `update` only (the merged censoring points before they are reduced to buckets): shared by every CDF, since `update` runs to completion
 * synchronously, so that a peer keeps only what its reads need.
 */
let scratchX: Float64Array = new Float64Array(64);
let scratchW: Float64Array = new Float64Array(64);
const NO_ENDS = new Float64Array(0);
/**
 * `Infinity` and `NaN` as module constants, not the globals: V8 compiles a global read in a branch it has
 * not run as a call, and boxes the other branch's number to merge with it.
 */
const NO_HORIZON = Infinity;
/** The span fields as `setSpan` writes them; readonly to everyone else. */
type Span = { -readonly [K in "horizonMs" | "minX" | "maxX"]: number };
const NO_VALUE = NaN;
/** What `lookUp` read, and the time it reads at (see there). */
const looked = new Float64Array(1);
const lookAt = new Float64Array(1);
/** Steps `segmentNear` walks from its hint before it falls back to the binary search. */
const NEAR_STEPS = 4;

/**
 * The window bucket of a censoring time in ms (floored to µs: a lower bound stays one). A whole µs count
 * divided by 1,000 can read a rounding error below it times 1,000 (1.001 · 1000 = 1000.999…): the
 * 1e-6 µs added (more than that error, up to 2^31 µs) keeps such a time in its own bucket.
 */
function bucketOfMs(x: number): number {
  return bucketOfUs(x * 1000 + 1e-6);
}

/** A CDF's per-point arrays for `size` points, views of one buffer (doubles first, then 4-, 2- and 1-byte ones). */
interface PointArrays {
  readonly segS: Float64Array;
  readonly segF: Float64Array;
  readonly tailX: Float64Array;
  readonly segR: Int32Array;
  readonly segC: Int32Array;
  readonly tailCum: Int32Array;
  readonly beta: Uint16Array;
  readonly flightEndedBefore: Uint16Array;
  readonly fromEnded: Uint8Array;
}

/**
 * Bytes a CDF holds per merged point: three doubles, three 32-bit counts, a 16-bit bucket, a 16-bit place
 * (of a call in flight: there are at most as many as points) and a flag.
 */
const POINT_BYTES = 3 * 8 + 3 * 4 + 2 + 2 + 1;

function pointArrays(size: number): PointArrays {
  const buffer = new ArrayBuffer(size * POINT_BYTES + 2 * 8 + 2 * 4);
  let at = 0;
  const f64 = (n: number): Float64Array => {
    const a = new Float64Array(buffer, at, n);
    at += n * 8;
    return a;
  };
  const i32 = (n: number): Int32Array => {
    const a = new Int32Array(buffer, at, n);
    at += n * 4;
    return a;
  };
  const segS = f64(size + 1);
  const segF = f64(size + 1);
  const tailX = f64(size);
  const segR = i32(size + 1);
  const segC = i32(size + 1);
  const tailCum = i32(size);
  const beta = new Uint16Array(buffer, at, size);
  const flightEndedBefore = new Uint16Array(buffer, at + size * 2, size);
  const fromEnded = new Uint8Array(buffer, at + size * 4, size);
  return { segS, segF, tailX, segR, segC, tailCum, beta, flightEndedBefore, fromEnded };
}

function grown(a: Float64Array, n: number): Float64Array {
  return a.length >= n ? a : new Float64Array(Math.max(n, a.length * 2));
}

/**
 * The window cannot know the q-quantile with `completions` completed observations: fewer than one is
 * expected beyond it, `completions · (1 − q) < 1`, i.e. fewer than 1 / (1 − q) of them (2 for the p50,
 * 100 for the p99). The empirical quantile is then the largest completion (or lies past it), which the
 * true one exceeds more often than not: it is reported as a lower bound. The count is over the whole
 * window (every slice), so a node that keeps calling a peer knows its p99 once the window holds 100
 * answers, and forgets it only when they age out.
 */
export function tooFewFor(q: number, completions: number): boolean {
  return completions * (1 - q) < 1 - 1e-9;
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
 * runs of buckets with the same censored weight, so `update` is O(m log B) for m censoring points (prefix
 * queries are kept while the windows are unchanged) and `at(t)` is one prefix and one point query on the
 * window's Fenwick tree, none again inside the bucket it read last.
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
  /**
   * The per-point arrays below are views of one buffer (`pointArrays`), room for the same number of points
   * (segments: one more); counts are integers in 32 bits (R at most the window's 65,535 samples, C and the
   * tail's cumulative weights at most every censored weight), buckets in 16.
   */
  private beta!: Uint16Array;
  private segR!: Int32Array;
  private segS!: Float64Array;
  private segC!: Int32Array;
  /**
   * Per segment s, its factor (R(end) + C_s) / (R(a_s) + C_s): one between two ended points keeps it while
   * the calls in flight only age (`survivalFrom` reuses it), so moving a call re-multiplies, not re-divides.
   */
  private segF!: Float64Array;
  /** The tail beyond the last completed bucket: survival there, the points (ms) sharing it and their cumulative weights. */
  private tailS = 0;
  private tailX!: Float64Array;
  private tailCum!: Int32Array;
  private tailCount = 0;
  private hiEdgeMs = 0;
  /** Weight of the ended-censored observations in the tail (calls in flight not counted). */
  private endedTail = 0;
  /**
   * The ended-censored points' buckets and R(beta + 1), kept while neither window changes: between two
   * decisions usually only the ages of the calls in flight move, and these prefix queries are most of a
   * rebuild.
   */
  private endBeta = new Uint16Array(0);
  private endRest = new Int32Array(0);
  /** Points the arrays are grown to at most (see the constructor). */
  private readonly capacity: number;
  private endWindow: WindowedHistogram | undefined;
  /** The window's range as of `rangeVersion` (two Fenwick descents, not repeated while the window is unchanged). */
  private rangeWindow: WindowedHistogram | undefined;
  private rangeVersion = -1;
  private rangeLo = 0;
  private rangeHi = -1;
  private endWindowVersion = -1;
  private endEndedVersion = -1;
  /**
   * 1 where merged point k is an ended call's, 0 where it is a call in flight; the number of calls in flight
   * and the windows' versions the points were merged on. While these stay, the ended points keep their
   * places and factors: between two estimates usually only the calls in flight age (`moveFlights`).
   */
  private fromEnded!: Uint8Array;
  /**
   * Per call in flight (ascending age), the number of ended points merged before it: a call that still lies
   * between the same two ended points keeps its place without a search.
   */
  private flightEndedBefore!: Uint16Array;
  private flights = 0;
  private shapeWindow: WindowedHistogram | undefined;
  private shapeWindowVersion = -1;
  private shapeEndedVersion = -1;
  /**
   * The last bucket `at` read below the tail, its range [memoLowUs, memoLowUs + memoWidthUs) and the CDF at
   * its two edges (the fan-out search narrows into one bucket); memoLowUs is Infinity when there is none.
   */
  private memoLowUs = Infinity;
  private memoHighUs = -Infinity;
  private memoWidthUs = 1;
  private memoBefore = 0;
  private memoAfter = 0;
  /**
   * The segment `lookUp` found last: the search reads each member at a few nearby grid points per
   * estimate, and the same ones the next time, so the segment is usually a step or two from it.
   */
  private segmentHint = 0;
  /** True when there is nothing: no completed sample and no censored observation. */
  empty = true;
  /**
   * The horizon, ms: the smallest censoring time at or beyond the last completed observation (Infinity when
   * no censored observation lies there). Below it the CDF is the Kaplan–Meier estimate; from it on, the
   * censored tail mass counts as done at its censoring time although each of those calls is only known to
   * take longer, so the CDF there is too high and a quantile that falls there is a lower bound.
   *
   * `horizonMs`, `minX` and `maxX` are fields set by `update` (`setSpan`), not getters: the fan-out search
   * reads all three per member and estimate, and a getter V8 has not inlined returns its number boxed: 48
   * bytes per member and estimate in the code that runs until the search is optimised again after a
   * deoptimisation. Read-only outside `setSpan`.
   */
  readonly horizonMs: number = NO_HORIZON;
  /** Where the CDF starts to rise (ms); NaN when empty. Set by `update`, as `horizonMs`. */
  readonly minX: number = NO_VALUE;
  /** From here on (ms) the CDF is 1; NaN when empty. Set by `update`, as `horizonMs`. */
  readonly maxX: number = NO_VALUE;
  private readonly counts = { rebuilds: 0, moves: 0 };

  /**
   * `capacity`: the most censored points an update will merge (calls in flight plus ended points), so that
   * growing the arrays by a quarter never holds room for more.
   */
  constructor(capacity = Infinity) {
    this.capacity = capacity;
    this.setPoints(pointArrays(0));
  }

  /**
   * How `update` has refreshed this CDF so far: `rebuilds` built everything anew (the windows changed, a
   * call began or ended, or one crossed into or out of the tail), `moves` moved the calls in flight in
   * place. An embedder reads it to see that the fast path runs; the object is live, not a copy.
   */
  get stats(): { readonly rebuilds: number; readonly moves: number } {
    return this.counts;
  }

  /**
   * Recomputes from the window's completed samples, the ages (ms, sorted ascending) of the calls in flight
   * and, when given, the ended calls' censored observations in the same window (`ended`, advanced to now by
   * the caller). The windows must not change while this CDF is read.
   */
  update(window: WindowedHistogram, agesMs: Float64Array, count: number, ended?: WindowedCensored): void {
    this.window = window;
    this.table = window.table;
    this.total = window.totalCount;
    this.floorMemo = undefined;
    if (this.rangeWindow !== window || this.rangeVersion !== window.version) {
      const r = window.range();
      this.rangeLo = r.lo;
      this.rangeHi = r.hi;
      this.rangeWindow = window;
      this.rangeVersion = window.version;
    }
    this.lo = this.rangeLo;
    this.hi = this.rangeHi;
    const pairs = ended?.pairs();
    const e = pairs?.n ?? 0;
    const endX = pairs?.x ?? NO_ENDS;
    const endW = pairs?.w ?? NO_ENDS;
    const endedVersion = ended?.version ?? -1;
    if (
      e > 0 &&
      (this.endWindow !== window ||
        this.endWindowVersion !== window.version ||
        this.endEndedVersion !== endedVersion)
    ) {
      if (this.endBeta.length < e) {
        const buffer = new ArrayBuffer(e * 6);
        this.endRest = new Int32Array(buffer, 0, e);
        this.endBeta = new Uint16Array(buffer, e * 4, e);
      }
      for (let j = 0; j < e; j++) {
        const k = bucketOfMs(endX[j] as number);
        this.endBeta[j] = k;
        this.endRest[j] = this.total - window.countAtOrBelow(k);
      }
      this.endWindow = window;
      this.endWindowVersion = window.version;
      this.endEndedVersion = endedVersion;
    }
    this.memoLowUs = Infinity;
    const m = count + e;
    const layout =
      m === this.m &&
      count === this.flights &&
      this.shapeWindow === window &&
      this.shapeWindowVersion === window.version &&
      this.shapeEndedVersion === endedVersion;
    this.m = m;
    this.flights = count;
    this.empty = this.total === 0 && m === 0;
    if (layout && this.moveFlights(agesMs, count, endX, endW, e)) {
      this.counts.moves++;
    } else {
      this.counts.rebuilds++;
      this.rebuild(agesMs, count, endX, endW, e);
      this.shapeWindow = window;
      this.shapeWindowVersion = window.version;
      this.shapeEndedVersion = endedVersion;
    }
    this.setSpan();
  }

  /**
   * Heap bytes: the points' nine arrays over one buffer, the ended points' two over another, and the
   * objects with their boxed numbers (`footprint.ts`).
   */
  get estimatedFootprintInBytes(): number {
    const elements = (this.beta.buffer as ArrayBuffer).byteLength + this.endRest.buffer.byteLength;
    // this object (368 bytes), its `counts` (32) and the 12 numbers it boxes (16 each)
    return arrayBytes(elements, 11, 2) + 368 + 32 + 12 * 16;
  }

  private setPoints(p: PointArrays): void {
    this.beta = p.beta;
    this.flightEndedBefore = p.flightEndedBefore;
    this.fromEnded = p.fromEnded;
    this.segR = p.segR;
    this.segS = p.segS;
    this.segC = p.segC;
    this.segF = p.segF;
    this.tailX = p.tailX;
    this.tailCum = p.tailCum;
  }

  /** `horizonMs`, `minX` and `maxX` from the built state (see `horizonMs`). */
  private setSpan(): void {
    const span = this as Span;
    const n = this.tailCount;
    span.horizonMs = n > 0 ? (this.tailX[0] as number) : NO_HORIZON;
    if (this.empty) {
      span.minX = NO_VALUE;
      span.maxX = NO_VALUE;
      return;
    }
    span.minX =
      this.hi >= 0
        ? ((this.table as BucketTable).lowUs[this.lo] as number) / 1000
        : (this.tailX[0] as number);
    span.maxX = n > 0 ? (this.tailX[n - 1] as number) : this.hiEdgeMs;
  }

  /**
   * The common case between two estimates: the windows are unchanged and each call in flight keeps its place
   * among the ended points, so only the calls in flight move. A call whose bucket changed re-runs the
   * segments from it on (the factors before it stand); the tail's points move in place. A young call
   * passes ended points at nearly every estimate: it moves past them in place (the ended points between
   * shift down one place and the censored weights from them on are re-summed, exactly, as they are
   * counts), and the segments from its old place to just past its new one take new factors. False
   * (nothing usable left) when a call crossed into or out of the tail: the caller rebuilds.
   */
  private moveFlights(
    agesMs: Float64Array,
    count: number,
    endX: Float64Array,
    endW: Float64Array,
    e: number,
  ): boolean {
    const beta = this.beta;
    const fromEnded = this.fromEnded;
    const hi = this.hi;
    const tailStart = this.m - this.tailCount;
    let from = this.m;
    let endedBefore = 0;
    /** Segments up to here changed neighbours or censored weight: their factors are computed anew. */
    let moved = -1;
    // from the oldest call down, so that a call moving past ended points finds only ended points
    // between its old and new places: the calls after it have moved already
    let upper = e;
    for (let i = count - 1; i >= 0; i--) {
      const age = agesMs[i] as number;
      // the merge's order: a call in flight goes before the first ended point it does not exceed; most
      // calls are still between the ended points they were merged between, else search below the next
      // call's (ages ascend)
      const was = this.flightEndedBefore[i] as number;
      let j = was;
      if (!((was === 0 || age > (endX[was - 1] as number)) && (was >= e || age <= (endX[was] as number)))) {
        j = 0;
        let b = upper;
        while (j < b) {
          const mid = (j + b) >>> 1;
          if (age <= (endX[mid] as number)) b = mid;
          else j = mid + 1;
        }
      }
      upper = j;
      const k = i + j;
      const x = Math.max(age, 0);
      const bucket = bucketOfMs(x);
      if (j !== was) {
        // the call passed ended points: move it past them in place, below the tail
        if (j < was || k >= tailStart || bucket >= hi) return false;
        const k0 = i + was;
        for (let s = k0; s < k; s++) {
          beta[s] = beta[s + 1] as number;
          fromEnded[s] = 1;
        }
        beta[k] = bucket;
        fromEnded[k] = 0;
        // the censored weight from each moved position on, summed from the right as a rebuild does
        const segC = this.segC;
        segC[k] = (segC[k + 1] as number) + 1;
        for (let s = k - 1; s >= k0; s--) segC[s] = (segC[s + 1] as number) + (endW[was + s - k0] as number);
        this.flightEndedBefore[i] = j;
        if (k0 < from) {
          from = k0;
          endedBefore = was;
        }
        if (k + 1 > moved) moved = k + 1;
        continue;
      }
      const before = beta[k] as number;
      if (bucket !== before) {
        if (before >= hi !== bucket >= hi) return false;
        beta[k] = bucket;
        if (k < from && k < tailStart) {
          from = k;
          endedBefore = j;
        }
      }
      if (k >= tailStart) this.tailX[k - tailStart] = Math.max(x, this.hiEdgeMs, 0.001);
    }
    // a call in the tail moves only its point: the segments read lie below the tail (`survivalFrom`)
    if (from < tailStart) {
      this.survivalFrom(from, endedBefore, true, moved);
      this.setTailSurvival();
    }
    return true;
  }

  /** Merges the calls in flight (weight 1 each) with the ended points, both ascending, and builds everything on them. */
  private rebuild(
    agesMs: Float64Array,
    count: number,
    endX: Float64Array,
    endW: Float64Array,
    e: number,
  ): void {
    const m = this.m;
    const size = this.beta.length;
    if (size < m) this.setPoints(pointArrays(Math.max(m, Math.min(size + (size >> 2), this.capacity))));
    const cx = (scratchX = grown(scratchX, m));
    const cw = (scratchW = grown(scratchW, m));
    const fromEnded = this.fromEnded;
    const beta = this.beta;
    for (let k = 0, i = 0, j = 0; k < m; k++) {
      if (j >= e || (i < count && (agesMs[i] as number) <= (endX[j] as number))) {
        this.flightEndedBefore[i] = j;
        const x = Math.max(agesMs[i++] as number, 0);
        cx[k] = x;
        cw[k] = 1;
        fromEnded[k] = 0;
        beta[k] = bucketOfMs(x);
      } else {
        cx[k] = endX[j] as number;
        cw[k] = endW[j] as number;
        fromEnded[k] = 1;
        beta[k] = this.endBeta[j++] as number;
      }
    }
    let weight = 0;
    for (let i = m - 1; i >= 0; i--) {
      weight += cw[i] as number;
      this.segC[i] = weight;
    }
    this.segC[m] = 0;
    this.segR[0] = this.total;
    this.segS[0] = 1;
    this.tail(cx, cw, fromEnded);
    this.survivalFrom(0, 0, false);
    this.setTailSurvival();
  }

  /**
   * The segments' R and S from segment `from` on (its own R and S, and every C, already set; `endedBefore`
   * ended points precede it): s = 0..m, bucket run (beta_{s−1}, beta_s] (beta_m = ∞) with C_s censored
   * weight in the risk set; R at a segment's start is R after the previous one's end (betas ascend, so a
   * run of equal betas is empty and keeps R). An ended point's R(beta + 1) is kept, a call's is queried.
   * Only up to the tail's first point: every read of a segment is of a bucket at or below the last
   * completed one (`segmentOf(k)`, k <= hi), and the points before the tail's are exactly those below it,
   * so no segment past it is read (the tail's points share `tailS` instead). With `reuse` (the ended
   * points and windows unchanged since the last run) a segment from an ended point to an ended point, or
   * from the start to one, keeps its factor: the same number, so the product is the one a rebuild makes.
   * Segments up to `changedTo` (a call moved past ended points there) are computed anew all the same.
   */
  private survivalFrom(from: number, endedBefore: number, reuse: boolean, changedTo = -1): void {
    const m = this.m - this.tailCount;
    const window = this.window as WindowedHistogram;
    const fromEnded = this.fromEnded;
    const segF = this.segF;
    let survival = this.segS[from] as number;
    let rStart = this.segR[from] as number;
    for (let s = from, j = endedBefore; s < m; s++) {
      let factor: number;
      let rEnd: number;
      if (fromEnded[s] === 1) {
        rEnd = this.endRest[j++] as number;
        if (reuse && s > changedTo && (s === 0 || fromEnded[s - 1] === 1)) factor = segF[s] as number;
        else {
          const c = this.segC[s] as number;
          factor = segF[s] = (rEnd + c) / (rStart + c);
        }
      } else {
        rEnd = this.total - window.countAtOrBelow(this.beta[s] as number);
        const c = this.segC[s] as number;
        factor = segF[s] = (rEnd + c) / (rStart + c);
      }
      survival *= factor;
      rStart = rEnd;
      this.segR[s + 1] = rStart;
      this.segS[s + 1] = survival;
    }
  }

  /** The survival the tail's points share: what is left after the last completed bucket, none without points. */
  private setTailSurvival(): void {
    this.tailS = this.tailCount === 0 ? 0 : this.hi >= 0 ? this.survivalAfter(this.hi) : 1;
  }

  /** The tail's points beyond the last completed bucket from the merged points (segments built). */
  private tail(cx: Float64Array, cw: Float64Array, fromEnded: Uint8Array): void {
    const m = this.m;
    const hi = this.hi;
    // tail: censored observations at or beyond the last completed bucket share the survival left there,
    // each in proportion to its weight, as a point at its censoring time (a lower bound)
    const table = this.table as BucketTable;
    this.hiEdgeMs = hi >= 0 ? ((table.lowUs[hi] as number) + (table.widthUs[hi] as number)) / 1000 : 0;
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
    this.endedTail = endedTail;
  }

  /**
   * True when `quantile(q)` is only a lower bound: the true quantile is at least the value returned (up to
   * HDR resolution), possibly much more. Either it falls in the censored tail beyond the last completed
   * observation, or the window cannot know it yet: fewer than 1 / (1 − q) completions (`tooFewFor`), so
   * fewer than one is expected beyond it and the value is the largest completion or past it.
   */
  lowerBound(q: number): boolean {
    if (this.empty) return false;
    if (tooFewFor(q, this.total)) return true;
    return !(this.hi >= 0 && (q <= 1 - this.tailS || this.tailCount === 0));
  }

  /** `p50FloorMs` as of the last `update` (undefined: not yet read since). */
  private floorMemo: number | undefined;

  /**
   * The p50 floor, ms: the largest t (a bucket's low edge) that the observations deciding it place the
   * median above at confidence 1 − `P50_FLOOR_ALPHA` (`medianAbove`, a one-sided sign test) — NaN when
   * there is none above 0. A completion decides every t; a censored observation decides the t at or below
   * its age (the call took longer than that) and is set aside above it. When none was set aside below t,
   * counting only what is known makes the floor hold whatever the censored calls would have taken. When
   * some were, they may have been the fast ones, so the floor is capped at this CDF's own p50, which counts
   * them (Kaplan–Meier, censoring taken independent of latency). Memoized until the next `update`.
   */
  p50FloorMs(): number {
    if (this.floorMemo !== undefined) return this.floorMemo;
    if (this.empty) return (this.floorMemo = NaN);
    const last = Math.max(this.hi, this.m > 0 ? (this.beta[this.m - 1] as number) : -1);
    // the test's p-value rises with k (fewer above, as many or more below), so the largest k that holds
    // is a binary search
    let a = 0;
    let b = last;
    if (!this.floorHolds(a)) return (this.floorMemo = NaN);
    while (a < b) {
      const mid = (a + b + 1) >>> 1;
      if (this.floorHolds(mid)) a = mid;
      else b = mid - 1;
    }
    let floor = ((this.table as BucketTable).lowUs[a] as number) / 1000;
    const setAside = (this.segC[0] as number) - (this.segC[this.segmentOf(a)] as number);
    if (setAside > 0) floor = Math.min(floor, this.quantile(0.5));
    return (this.floorMemo = floor > 0 ? floor : NaN);
  }

  /** `p50FloorMs`'s test at bucket k: completions below it against those and censored calls at or beyond it. */
  private floorHolds(k: number): boolean {
    const below = (this.window as WindowedHistogram).countAtOrBelow(k - 1);
    const censored = this.segC[this.segmentOf(k)] as number;
    return medianAbove(this.total - below + censored, below);
  }

  /** Completed samples in the window (probe completions among them). */
  get completedCount(): number {
    return this.total;
  }

  /** Weight of the ended-censored observations (not calls in flight) at or beyond the last completed bucket. */
  get endedTailWeight(): number {
    return this.endedTail;
  }

  /** Survival after bucket k: P(latency beyond bucket k). */
  private survivalAfter(k: number): number {
    if (k < this.lo) return 1;
    return this.survivalIn(
      this.segmentOf(k),
      this.total - (this.window as WindowedHistogram).countAtOrBelow(k),
    );
  }

  /** The segment of bucket k: the number of censored entries with beta < k (beta sorted). */
  private segmentOf(k: number): number {
    let a = 0;
    let b = this.m;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.beta[mid] as number) < k) a = mid + 1;
      else b = mid;
    }
    return a;
  }

  /**
   * `segmentOf(k)` found by walking from the last one `lookUp` found, a few steps at most (the same
   * count: betas ascend), else by the binary search.
   */
  private segmentNear(k: number): number {
    const beta = this.beta;
    const m = this.m;
    let s = Math.min(this.segmentHint, m);
    const stop = s > NEAR_STEPS ? s - NEAR_STEPS : 0;
    while (s > stop && (beta[s - 1] as number) >= k) s--;
    if (s > 0 && (beta[s - 1] as number) >= k) s = this.segmentOf(k);
    else {
      const end = Math.min(s + NEAR_STEPS, m);
      while (s < end && (beta[s] as number) < k) s++;
      if (s < m && (beta[s] as number) < k) s = this.segmentOf(k);
    }
    this.segmentHint = s;
    return s;
  }

  /** Survival after a bucket of segment s beyond which `rNext` completed samples lie. */
  private survivalIn(s: number, rNext: number): number {
    const c = this.segC[s] as number;
    const rStart = this.segR[s] as number;
    if (rStart + c === 0) return this.segS[s] as number;
    return ((this.segS[s] as number) * (rNext + c)) / (rStart + c);
  }

  /**
   * P(latency <= tMs). A read inside the bucket read last is answered here; kept this small so that V8
   * inlines it into the fan-out search's loops (a call that is not inlined boxes the number it returns).
   */
  at(tMs: number): number {
    const us = tMs * 1000;
    if (us >= this.memoLowUs && us < this.memoHighUs && tMs < this.hiEdgeMs) {
      const theta = (us - this.memoLowUs) / this.memoWidthUs;
      return this.memoBefore + theta * (this.memoAfter - this.memoBefore);
    }
    lookAt[0] = tMs;
    this.lookUp();
    return looked[0] as number;
  }

  /**
   * `at` outside the memo's bucket: one segment search and one prefix query (and the memo set), or the
   * tail. The value goes to `looked[0]`, not out as a return: a number returned by a call V8 does not
   * inline is boxed, 16 bytes per member and point the fan-out search reads. The time comes in through
   * `lookAt[0]` for the same reason: a time read from a typed array would be boxed to pass as an argument.
   */
  private lookUp(): void {
    const tMs = lookAt[0] as number;
    if (this.empty) {
      looked[0] = 0;
      return;
    }
    if (this.hi >= 0 && tMs < this.hiEdgeMs) {
      const us = tMs * 1000;
      const k = us >= 1 ? bucketIndexOf(Math.floor(us)) : -1;
      if (k < this.lo) {
        looked[0] = 0;
        return;
      }
      const table = this.table as BucketTable;
      const low = table.lowUs[k] as number;
      const width = table.widthUs[k] as number;
      const theta = (us - low) / width;
      // survival after k and after k − 1 from one segment search and one prefix query (the read the
      // fan-out search repeats per peer and grid point)
      const window = this.window as WindowedHistogram;
      const rAfter = this.total - window.countAtOrBelow(k);
      let s = this.segmentNear(k);
      const after = 1 - this.survivalIn(s, rAfter);
      let before = 0;
      if (k - 1 >= this.lo) {
        while (s > 0 && (this.beta[s - 1] as number) >= k - 1) s--;
        before = 1 - this.survivalIn(s, rAfter + window.countAt(k));
      }
      this.memoLowUs = low;
      this.memoHighUs = low + width;
      this.memoWidthUs = width;
      this.memoBefore = before;
      this.memoAfter = after;
      looked[0] = before + theta * (after - before);
      return;
    }
    const n = this.tailCount;
    // points at or below t
    let a = 0;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if ((this.tailX[mid] as number) <= tMs) a = mid + 1;
      else b = mid;
    }
    if (a === n) looked[0] = 1;
    else if (a === 0) looked[0] = 1 - this.tailS;
    else
      looked[0] =
        1 - this.tailS + (this.tailS * (this.tailCum[a - 1] as number)) / (this.tailCum[n - 1] as number);
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
