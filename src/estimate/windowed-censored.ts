/**
 * Right-censored observations of *ended* calls ("latency > age": cut at the deadline, or abandoned),
 * kept in arrival order in a {@link SlotFifo} on the same slice ring as {@link WindowedHistogram}
 * (absolute epochs), so a censored end and a sample recorded at the same time leave together.
 *
 * Reading groups them into coarse log-linear buckets, each read as one point at the smallest age in it:
 * a lower bound for every observation of the bucket, so the estimate never claims more than was seen,
 * and exact for the common case of many calls cut at one deadline. The buffer starts empty and grows
 * by doubling, so a peer that never has a call cut costs nothing here. Recording is O(1); reading walks
 * the observations once per change.
 *
 * @example
 * const ended = new WindowedCensored(10_000, 6, 60e6);
 * ended.record(35_000, clock.now()); // a call cut after 35 ms: its latency is > 35 ms
 * const n = ended.read(agesMs, weights); // ascending lower bounds (ms) and counts
 */
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
 * Grouping scratch of `materialize` (per coarse bucket: observations and smallest age), shared by every
 * window since reading runs to completion synchronously; kept all-zero / all-max between reads.
 */
const GROUP_COUNT = new Float64Array(BUCKETS_31_BITS);
const GROUP_MIN = new Float64Array(BUCKETS_31_BITS).fill(Infinity);

export class WindowedCensored extends SliceRing {
  /** Coarse buckets of the trackable range (index of the highest trackable value + 1). */
  readonly buckets: number;
  private readonly highestUs: number;
  private readonly ends: SlotFifo;
  private total = 0;
  /** The window's (lower bound ms, count) pairs as of `pairsVersion`. */
  private readonly view: { x: Float64Array; w: Float64Array; n: number } = {
    x: new Float64Array(0),
    w: new Float64Array(0),
    n: 0,
  };
  private pairsVersion = -1;
  /** Bumped whenever the content changes (record, eviction, reset). */
  version = 0;

  constructor(windowMs: number, slices: number, highestTrackableUs: number, maxEnds = 1024, slots = slices) {
    super(windowMs, slices, slots);
    this.highestUs = Math.max(1, Math.min(Math.floor(highestTrackableUs), 0x7fffffff));
    this.buckets = coarseIndexOf(this.highestUs) + 1;
    this.ends = new SlotFifo(maxEnds, this.slots, true);
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
    if (this.ends.push(v, this.slot, (this.slot + 1) % this.slots) < 0) this.total++;
    this.version++;
  }

  /**
   * The window's censored observations as (lower bound in ms, count) pairs in ascending order: the first
   * `n` of `x` and `w`. The object and its arrays are the window's own, valid until it changes: read them, do not keep or
   * write them. Call `advance` first.
   */
  pairs(): CensoredPairs {
    if (this.total === 0) return NO_PAIRS;
    this.materialize();
    return this.view;
  }

  /** Approximate bytes held (the buffer is empty until the first censored end). */
  get estimatedFootprintInBytes(): number {
    return this.ends.estimatedFootprintInBytes + this.view.x.byteLength + this.view.w.byteLength + 128;
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
    this.ends.forEach((v) => {
      const i = coarseIndexOf(v);
      GROUP_COUNT[i] = (GROUP_COUNT[i] as number) + 1;
      if (v < (GROUP_MIN[i] as number)) GROUP_MIN[i] = v;
      if (i < lo) lo = i;
      if (i > hi) hi = i;
    });
    const view = this.view;
    const bound = Math.min(this.total, hi - lo + 1);
    if (view.x.length < bound) {
      const length = Math.max(bound, view.x.length * 2, 4);
      view.x = new Float64Array(length);
      view.w = new Float64Array(length);
    }
    let k = 0;
    for (let i = lo; i <= hi; i++) {
      const c = GROUP_COUNT[i] as number;
      if (c === 0) continue;
      view.x[k] = (GROUP_MIN[i] as number) / 1000;
      view.w[k] = c;
      k++;
      GROUP_COUNT[i] = 0;
      GROUP_MIN[i] = Infinity;
    }
    view.n = k;
  }
}

function noop(): void {}

/** (lower bound ms, count) pairs: the first `n` of `x` and `w`. */
export interface CensoredPairs {
  readonly x: Float64Array;
  readonly w: Float64Array;
  readonly n: number;
}

const NO_PAIRS: CensoredPairs = { x: new Float64Array(0), w: new Float64Array(0), n: 0 };
