/**
 * The ring rotation shared by the estimator's sliding windows (WindowedHistogram for completed samples,
 * WindowedCensored for censored ends): time is cut into slices of `windowMs / slices`, numbered by
 * `epoch = floor(now / sliceMs)` (absolute, so two windows with the same settings rotate together), and
 * moving to a later epoch evicts the slots that fell out of the ring. The ring has `slots` slots, `slices`
 * unless a window may reach back further than `windowMs`: then the owner trims the slices it no longer
 * needs with `dropBefore` (see PeerLatency). Subclasses keep the counts and say how to evict one slot and
 * how to clear everything.
 */
export abstract class SliceRing {
  readonly sliceMs: number;
  /** Slice number (floor(now / sliceMs)) of the current slot; −Infinity before the first use. */
  protected epoch = -Infinity;
  /** Index of the current slot in the ring. */
  protected slot = 0;
  /** Slice number below which every slot is known empty (`dropBefore` has evicted it). */
  private floor = -Infinity;
  /** Slots in the ring: the slices held at most, `slices` (the window) or more. */
  readonly slots: number;

  constructor(
    readonly windowMs: number,
    readonly slices: number,
    slots = slices,
  ) {
    this.sliceMs = windowMs / slices;
    this.slots = Math.max(slices, slots);
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
    if (steps >= this.slots) {
      this.clearAll();
    } else {
      for (let i = 0; i < steps; i++) {
        this.slot = (this.slot + 1) % this.slots;
        this.evict(this.slot);
      }
    }
    this.epoch = epoch;
  }

  /** Slice number of the current slot (−Infinity before the first use). */
  get currentEpoch(): number {
    return this.epoch;
  }

  /** Slot index of slice number `e` (one of the ring's: `epoch − slots < e <= epoch`). */
  protected slotOf(e: number): number {
    return (((this.slot - (this.epoch - e)) % this.slots) + this.slots) % this.slots;
  }

  /**
   * Evicts the held slices numbered below `fromEpoch`, oldest first; the window's own `slices` are never
   * evicted here (`fromEpoch` is capped at the oldest of them).
   */
  dropBefore(fromEpoch: number): void {
    if (this.epoch === -Infinity) return;
    const to = Math.min(fromEpoch, this.epoch - this.slices + 1);
    for (let e = Math.max(this.floor, this.epoch - this.slots + 1); e < to; e++) this.evict(this.slotOf(e));
    if (to > this.floor) this.floor = to;
  }

  /** Forgets everything (peer restart). */
  reset(): void {
    this.clearAll();
    this.epoch = -Infinity;
    this.floor = -Infinity;
  }

  /** Removes slot `s`'s counts from the running sum and clears the slot. */
  protected abstract evict(s: number): void;
  /** Clears every slot and the running sum. */
  protected abstract clearAll(): void;
}
