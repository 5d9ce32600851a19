/**
 * Right-censored observations of *ended* calls ("latency > age": cut at the deadline, or abandoned),
 * kept in arrival order in a {@link SlotFifo} on the same slice ring as {@link WindowedHistogram}
 * (absolute epochs), so a censored end and a sample recorded at the same time leave together. An end is
 * kept in 16 bits, as its age's bucket in the finest log-linear layout whose index of the highest trackable
 * age fits them (`endSubBits`: 4,096 buckets per power of two up to 134 s, the default 60 s among them;
 * 2,048 up to the options' 2,000 s): the age rounded down to its bucket's low edge, less than 1/4,096
 * (1/2,048) below it, exact below 8,192 (4,096) µs. These buckets nest in the histogram's, so the bucket
 * the CDF's Kaplan–Meier steps use is the age's own, and a lower bound stays one.
 *
 * Reading groups them into coarse log-linear buckets, each read as one point at the smallest age in it:
 * a lower bound for every observation of the bucket, so the estimate never claims more than was seen,
 * and exact (to the bucket edge) for the common case of many calls cut at one deadline. Past
 * {@link MAX_END_POINTS} non-empty coarse buckets, the lowest points merge pairwise, each read at the
 * smaller age (`mergeLowest`): still lower bounds, the highest (the tail) kept as they are longest, and
 * the CDF a peer keeps bounded whatever its ends' spread. The buffer starts empty and grows by doubling,
 * so a peer that never has a call cut costs nothing here. Recording is O(1); reading walks the
 * observations once per change.
 *
 * @example
 * const ended = new WindowedCensored(10_000, 6, 60e6);
 * ended.record(35_000, clock.now()); // a call cut after 35 ms: its latency is > 35 ms
 * const { x, w, n } = ended.pairs(); // ascending lower bounds (ms) and counts
 */
import { arrayBytes } from "./footprint.js";
import { logLinearIndex, logLinearLow } from "./log-linear.js";
import { SliceRing } from "./slice-ring.js";
import { SlotFifo } from "./slot-fifo.js";

/** Sub-buckets per power of two: 2^SUB_BITS / 2 = 16, so a bucket is 3–6 % of its low edge wide. */
const SUB_BITS = 5;

/** Coarse bucket index of an integer value (µs) in [0, 2^31). */
export function coarseIndexOf(v: number): number {
  return logLinearIndex(v, SUB_BITS);
}

/** Lower edge (µs) of coarse bucket `i`. */
export function coarseLowOf(i: number): number {
  return logLinearLow(i, SUB_BITS);
}

const BUCKETS_31_BITS = coarseIndexOf(0x7fffffff) + 1;

/**
 * The finest log-linear layout (2^(bits − 1) buckets per power of two, at most 2^15) in which an age up to
 * `highestUs` has a 16-bit index. At 12 bits the index of 2^31 − 1 is 43,007, so it is at least 12.
 */
export function endSubBits(highestUs: number): number {
  let bits = 16;
  while (logLinearIndex(highestUs, bits) > 0xffff) bits--;
  return bits;
}

/**
 * The most (lower bound, count) points a window reads out, and so the most ended points a peer's CDF
 * merges: a bound on its memory (63 bytes a point across the pairs and the CDF) whatever the ends'
 * spread. Ends in up to 24 coarse buckets (an octave and a half at 16 a power of two) are read as they are.
 */
export const MAX_END_POINTS = 24;

/**
 * Grouping scratch of `materialize` (per coarse bucket: observations and smallest age), shared by every
 * window since reading runs to completion synchronously; kept all-zero / all-max between reads.
 */
const GROUP_COUNT = new Float64Array(BUCKETS_31_BITS);
const GROUP_MIN = new Float64Array(BUCKETS_31_BITS).fill(Infinity);
/** The grouped points in ascending order, before neighbours are merged down to MAX_END_POINTS. */
const GROUP_X = new Float64Array(BUCKETS_31_BITS);
const GROUP_W = new Float64Array(BUCKETS_31_BITS);

export class WindowedCensored extends SliceRing {
  /** Coarse buckets of the trackable range (index of the highest trackable value + 1). */
  readonly buckets: number;
  private readonly highestUs: number;
  /** The layout an end is kept in (`endSubBits`). */
  private readonly subBits: number;
  private readonly ends: SlotFifo;
  private total = 0;
  /** The window's (lower bound ms, count) pairs as of `pairsVersion`. */
  private readonly view: { x: Float64Array; w: Float64Array; n: number };
  private pairsVersion = -1;
  /** Bumped whenever the content changes (record, eviction, reset, the extra point). */
  version = 0;
  /** One more (lower bound µs, count) pair the pairs carry, not in the window: the owner's untracked calls in flight. */
  private extraUs = 0;
  private extraCount = 0;

  constructor(windowMs: number, slices: number, highestTrackableUs: number, maxEnds = 1024, slots = slices) {
    super(windowMs, slices, slots);
    this.highestUs = Math.max(1, Math.min(Math.floor(highestTrackableUs), 0x7fffffff));
    this.buckets = coarseIndexOf(this.highestUs) + 1;
    this.subBits = endSubBits(this.highestUs);
    const none = pairArrays(0);
    this.view = { x: none.x, w: none.w, n: 0 };
    this.ends = new SlotFifo(maxEnds, this.slots);
  }

  /** Censored observations in the window as of the last `advance`/`record`. */
  get totalCount(): number {
    return this.total;
  }

  /** Observations dropped because the window already held `maxEnds` (the oldest go first). */
  get dropped(): number {
    return this.ends.dropped;
  }

  /** Records a call that ended without an answer after `ageUs` µs, at clock time `nowMs`. NaN is ignored. */
  record(ageUs: number, nowMs: number): void {
    if (Number.isNaN(ageUs)) return;
    if (nowMs >= (this.epoch + 1) * this.sliceMs) this.advance(nowMs);
    let v = Math.floor(ageUs); // down: a lower bound stays a lower bound
    if (!(v >= 0)) v = 0;
    else if (v > this.highestUs) v = this.highestUs;
    if (this.ends.push(logLinearIndex(v, this.subBits), this.slot, (this.slot + 1) % this.slots) < 0)
      this.total++;
    this.version++;
  }

  /**
   * Sets the extra pair: `count` observations censored at `ageUs` µs (floored: a lower bound stays one),
   * merged into `pairs` (so one past MAX_END_POINTS) but not into `totalCount`. 0 removes it.
   */
  setExtra(ageUs: number, count: number): void {
    const us = count > 0 ? Math.max(0, Math.floor(ageUs)) : 0;
    if (us === this.extraUs && count === this.extraCount) return;
    this.extraUs = us;
    this.extraCount = count;
    this.version++;
  }

  /**
   * The window's censored observations as (lower bound in ms, count) pairs in ascending order: the first
   * `n` of `x` and `w`, the extra pair (`setExtra`) among them. The object and its arrays are the window's
   * own, valid until it changes: read them, do not keep or write them. Call `advance` first.
   */
  pairs(): CensoredPairs {
    if (this.total === 0 && this.extraCount === 0) return NO_PAIRS;
    this.materialize();
    return this.view;
  }

  /**
   * Heap bytes: the ends' ring (empty until the first censored end), the pairs (two arrays over one
   * buffer) and the objects (`footprint.ts`).
   */
  get estimatedFootprintInBytes(): number {
    const view = this.view;
    return (
      this.ends.estimatedFootprintInBytes +
      arrayBytes(view.x.byteLength + view.w.byteLength, 2, 1) +
      // this object (136 bytes) and the view's (40)
      136 +
      40
    );
  }

  protected override evict(s: number): void {
    const n = this.ends.countOf(s);
    if (n === 0) return;
    this.ends.popSlot(s, noop);
    this.total -= n;
    this.version++;
  }

  protected override clearAll(): void {
    this.ends.clear();
    this.total = 0;
    this.version++;
  }

  /**
   * Groups the live observations per coarse bucket into the pairs, once per version. The check is apart
   * from the grouping: V8 allocates the grouping's closure context on entry, and a fan-out estimate
   * reads every member's pairs, most of them unchanged.
   */
  private materialize(): void {
    if (this.pairsVersion === this.version) return;
    this.pairsVersion = this.version;
    this.group();
  }

  private group(): void {
    let lo = 0x7fffffff;
    let hi = -1;
    const bits = this.subBits;
    this.ends.forEach((b) => {
      const v = logLinearLow(b, bits);
      const i = coarseIndexOf(v);
      GROUP_COUNT[i] = (GROUP_COUNT[i] as number) + 1;
      if (v < (GROUP_MIN[i] as number)) GROUP_MIN[i] = v;
      if (i < lo) lo = i;
      if (i > hi) hi = i;
    });
    let k = 0;
    for (let i = lo; i <= hi; i++) {
      const c = GROUP_COUNT[i] as number;
      if (c === 0) continue;
      GROUP_X[k] = (GROUP_MIN[i] as number) / 1000;
      GROUP_W[k] = c;
      k++;
      GROUP_COUNT[i] = 0;
      GROUP_MIN[i] = Infinity;
    }
    let n = mergeLowest(k);
    if (this.extraCount > 0) n = insertPair(n, this.extraUs / 1000, this.extraCount);
    const view = this.view;
    if (view.x.length < n) {
      const arrays = pairArrays(Math.min(Math.max(n, view.x.length * 2, 4), MAX_END_POINTS + 1));
      view.x = arrays.x;
      view.w = arrays.w;
    }
    for (let j = 0; j < n; j++) {
      view.x[j] = GROUP_X[j] as number;
      view.w[j] = GROUP_W[j] as number;
    }
    view.n = n;
  }
}

function noop(): void {}

/**
 * Brings the first `k` grouped points (ascending) to at most MAX_END_POINTS: the lowest fold into one,
 * read at the smallest age with all their weight (each end is read at or below its age, so a quantile can
 * only fall toward the completed-only one, never rise); the highest MAX_END_POINTS − 1, the tail the lower
 * bounds rest on, keep their places. Returns the count left.
 */
function mergeLowest(k: number): number {
  if (k <= MAX_END_POINTS) return k;
  const folded = k - MAX_END_POINTS + 1;
  let w = 0;
  for (let j = 0; j < folded; j++) w += GROUP_W[j] as number;
  GROUP_W[0] = w;
  for (let j = folded; j < k; j++) {
    GROUP_X[j - folded + 1] = GROUP_X[j] as number;
    GROUP_W[j - folded + 1] = GROUP_W[j] as number;
  }
  return MAX_END_POINTS;
}

/** Inserts (x, w) among the first `n` grouped points in ascending order; returns the count. */
function insertPair(n: number, x: number, w: number): number {
  let j = n;
  while (j > 0 && (GROUP_X[j - 1] as number) > x) {
    GROUP_X[j] = GROUP_X[j - 1] as number;
    GROUP_W[j] = GROUP_W[j - 1] as number;
    j--;
  }
  GROUP_X[j] = x;
  GROUP_W[j] = w;
  return n + 1;
}

/** Room for `length` pairs: their lower bounds and counts, two views of one buffer. */
function pairArrays(length: number): { x: Float64Array; w: Float64Array } {
  const buffer = new ArrayBuffer(length * 16);
  return { x: new Float64Array(buffer, 0, length), w: new Float64Array(buffer, length * 8, length) };
}

/** (lower bound ms, count) pairs: the first `n` of `x` and `w`. */
export interface CensoredPairs {
  readonly x: Float64Array;
  readonly w: Float64Array;
  readonly n: number;
}

const NO_PAIRS: CensoredPairs = { x: new Float64Array(0), w: new Float64Array(0), n: 0 };
