import { build, JsHistogram } from "hdr-histogram-js";

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
  let t = tables.get(h.highestTrackableValue);
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
    tables.set(h.highestTrackableValue, t);
  }
  return t;
}

/** The window's counts, for building a CDF: indexes `lo..hi` of `histogram` hold the `total` samples. */
export interface WindowCounts {
  readonly histogram: JsHistogram;
  readonly lo: number;
  readonly hi: number;
  readonly total: number;
  readonly table: BucketTable;
}

/** Values (µs) of at most 2^31 − 1 use the bit arithmetic below; the options cap the range well under it. */
export const MAX_TRACKABLE_US = 0x7fffffff;

/**
 * A sliding-window HDR histogram: a ring of `slices` sub-window histograms of `windowMs / slices` each plus a
 * running-sum histogram. A sample is recorded into the current slice and the sum; when the clock passes into a
 * new slice, the evicted slice is subtracted from the sum and cleared. Rotation is driven by the `now` passed
 * in (no timers), so it runs the same on the system clock and on a simulated one.
 *
 * A sample therefore counts for between `windowMs − windowMs/slices` and `windowMs` of clock time, within the
 * contract's staleness bound `windowMs · (1 + 1/slices)`. Values are integer µs, clamped to
 * `[1, highestTrackableUs]`. Memory: `slices + 1` histograms of ≈ 11 KB (≈ 77 KB at 6 slices).
 *
 * @example
 * const w = new WindowedHistogram(10_000, 6, 60e6);
 * w.record(12_500, clock.now()); // 12.5 ms
 * w.valueAtPercentile(99, clock.now()); // µs
 */
export class WindowedHistogram {
  readonly sliceMs: number;
  private readonly ring: JsHistogram[];
  private readonly ringMin: Int32Array;
  private readonly ringMax: Int32Array;
  private readonly ringCount: Float64Array;
  private readonly sum: JsHistogram;
  private readonly highestUs: number;
  private readonly table: BucketTable;
  /** Slice number (floor(now / sliceMs)) of the current slot; −Infinity before the first use. */
  private epoch = -Infinity;
  private slot = 0;
  /** Bumped whenever the window's content changes (record, eviction, reset). */
  version = 0;

  constructor(
    readonly windowMs: number,
    readonly slices: number,
    highestTrackableUs: number,
  ) {
    this.sliceMs = windowMs / slices;
    this.highestUs = Math.min(Math.floor(highestTrackableUs), MAX_TRACKABLE_US);
    this.sum = newHistogram(this.highestUs);
    if (this.sum.subBucketHalfCount !== 128 || this.sum.unitMagnitude !== 0) {
      throw new Error("WindowedHistogram assumes 2 significant digits and a 1 µs unit");
    }
    this.table = bucketTable(this.sum);
    this.ring = Array.from({ length: slices }, () => newHistogram(this.highestUs));
    this.ringMin = new Int32Array(slices).fill(0x7fffffff);
    this.ringMax = new Int32Array(slices).fill(-1);
    this.ringCount = new Float64Array(slices);
  }

  /** Samples in the window as of the last `advance`/`record`. */
  get totalCount(): number {
    return this.sum.totalCount;
  }

  /** Records one value (µs) at clock time `nowMs`. */
  record(valueUs: number, nowMs: number): void {
    if (nowMs >= (this.epoch + 1) * this.sliceMs) this.advance(nowMs);
    let v = Math.round(valueUs);
    if (!(v >= 1))
      v = 1; // also catches NaN
    else if (v > this.highestUs) v = this.highestUs;
    // HDR's countsArrayIndex for 2 significant digits and unit 1 µs (sub-bucket half count 128), with
    // clz32 instead of log2/pow: bucket b = max(0, floor(log2 v) − 7), index = (b + 1)·128 + (v >> b) − 128.
    const sum = this.sum;
    const b = Math.max(0, 24 - Math.clz32(v));
    const idx = (b << 7) + (v >>> b);
    const s = this.slot;
    const h = this.ring[s] as JsHistogram;
    h.incrementCountAtIndex(idx);
    h.incrementTotalCount();
    sum.incrementCountAtIndex(idx);
    sum.incrementTotalCount();
    this.ringCount[s] = (this.ringCount[s] as number) + 1;
    if (idx < (this.ringMin[s] as number)) this.ringMin[s] = idx;
    if (idx > (this.ringMax[s] as number)) this.ringMax[s] = idx;
    this.version++;
  }

  /** Moves the window to `nowMs`, evicting slices that fell out of it. A clock going backwards changes nothing. */
  advance(nowMs: number): void {
    const epoch = Math.floor(nowMs / this.sliceMs);
    if (this.epoch === -Infinity) {
      this.epoch = epoch;
      return;
    }
    if (epoch <= this.epoch) return;
    const steps = epoch - this.epoch;
    if (steps >= this.slices) {
      this.clearAll();
    } else {
      for (let i = 0; i < steps; i++) {
        this.slot = (this.slot + 1) % this.slices;
        this.evict(this.slot);
      }
    }
    this.epoch = epoch;
  }

  /** Forgets every sample (peer restart). */
  reset(): void {
    this.clearAll();
    this.epoch = -Infinity;
  }

  /** The window's counts as of the last `advance`/`record` (read them before the next record). */
  counts(): WindowCounts {
    let lo = 0x7fffffff;
    let hi = -1;
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) === 0) continue;
      lo = Math.min(lo, this.ringMin[s] as number);
      hi = Math.max(hi, this.ringMax[s] as number);
    }
    return { histogram: this.sum, lo, hi, total: this.sum.totalCount, table: this.table };
  }

  /** HDR's own percentile over the window (µs); 0 when empty. */
  valueAtPercentile(percentile: number, nowMs: number): number {
    this.advance(nowMs);
    return this.sum.totalCount === 0 ? 0 : this.sum.getValueAtPercentile(percentile);
  }

  /** Approximate bytes held: the counts arrays plus per-histogram overhead. */
  get estimatedFootprintInBytes(): number {
    return (this.slices + 1) * this.sum.estimatedFootprintInBytes + this.slices * 16;
  }

  private evict(s: number): void {
    const n = this.ringCount[s] as number;
    if (n === 0) return;
    const h = this.ring[s] as JsHistogram;
    const sum = this.sum;
    const hi = this.ringMax[s] as number;
    for (let i = this.ringMin[s] as number; i <= hi; i++) {
      const c = h.getCountAtIndex(i);
      if (c > 0) sum.addToCountAtIndex(i, -c);
    }
    sum.setTotalCount(sum.totalCount - n);
    h.reset();
    this.ringCount[s] = 0;
    this.ringMin[s] = 0x7fffffff;
    this.ringMax[s] = -1;
    this.version++;
  }

  private clearAll(): void {
    for (let s = 0; s < this.slices; s++) {
      if ((this.ringCount[s] as number) > 0) (this.ring[s] as JsHistogram).reset();
      this.ringCount[s] = 0;
      this.ringMin[s] = 0x7fffffff;
      this.ringMax[s] = -1;
    }
    this.sum.reset();
    this.version++;
  }
}
