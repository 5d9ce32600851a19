/**
 * The ring rotation shared by the estimator's sliding windows (WindowedHistogram for completed samples,
 * WindowedCensored for censored ends): time is cut into slices of `windowMs / slices`, numbered by
 * `epoch = floor(now / sliceMs)` (absolute, so two windows with the same settings rotate together), and
 * moving to a later epoch evicts the slots that fell out of the window. Subclasses keep the counts and say
 * how to evict one slot and how to clear everything.
 */
export abstract class SliceRing {
  readonly sliceMs: number;
  /** Slice number (floor(now / sliceMs)) of the current slot; −Infinity before the first use. */
  protected epoch = -Infinity;
  /** Index of the current slot in the ring. */
  protected slot = 0;

  constructor(
    readonly windowMs: number,
    readonly slices: number,
  ) {
    this.sliceMs = windowMs / slices;
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

  /** Forgets everything (peer restart). */
  reset(): void {
    this.clearAll();
    this.epoch = -Infinity;
  }

  /** Removes slot `s`'s counts from the running sum and clears the slot. */
  protected abstract evict(s: number): void;
  /** Clears every slot and the running sum. */
  protected abstract clearAll(): void;
}
