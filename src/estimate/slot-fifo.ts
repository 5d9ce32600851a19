import { arrayBytes } from "./footprint.js";

/**
 * The samples of a sliding window in arrival order, at most `capacity` of them: a ring buffer of one 16-bit
 * bucket index per sample plus how many of them each slice of the window's
 * ring holds. A window records into its current slice only and the current slice only moves forward, so
 * the buffer is the live slices' samples oldest slice first: evicting a slice pops its count from the head.
 * When the buffer is full the oldest sample is dropped (and counted), so a peer answering faster than
 * `capacity` per window keeps its newest `capacity` samples.
 *
 * The buffer grows by doubling from 16 entries up to `capacity`, so a peer with few samples pays for few.
 */
export class SlotFifo {
  private values: Uint16Array;
  private head = 0;
  private length = 0;
  private readonly perSlot: Uint16Array;
  /** Samples dropped because the buffer was full (the window's count bound triggered). */
  dropped = 0;

  /** At most 65,535 (`capacity` is clamped to it): a slice's count is 16-bit. */
  readonly capacity: number;

  constructor(capacity: number, slices: number) {
    this.capacity = Math.min(capacity, 0xffff);
    this.values = new Uint16Array(0);
    this.perSlot = new Uint16Array(slices);
  }

  get size(): number {
    return this.length;
  }

  /** Samples held for slot `s`. */
  countOf(s: number): number {
    return this.perSlot[s] as number;
  }

  /**
   * Appends `value` to slot `slot` (the window's current one). Returns the value dropped to make room
   * (from the oldest non-empty slot, `oldestFrom` onwards in ring order), or −1 when nothing was dropped.
   */
  push(value: number, slot: number, oldestFrom: number): number {
    let out = -1;
    if (this.length === this.values.length && !this.grow()) {
      out = this.values[this.head] as number;
      this.head = (this.head + 1) % this.values.length;
      this.length--;
      this.dropped++;
      const slices = this.perSlot.length;
      for (let i = 0; i < slices; i++) {
        const s = (oldestFrom + i) % slices;
        if ((this.perSlot[s] as number) > 0) {
          this.perSlot[s] = (this.perSlot[s] as number) - 1;
          break;
        }
      }
    }
    this.values[(this.head + this.length) % this.values.length] = value;
    this.length++;
    this.perSlot[slot] = (this.perSlot[slot] as number) + 1;
    return out;
  }

  /** Removes slot `s`'s samples, which must be the oldest ones held, calling `each` with every value. */
  popSlot(s: number, each: (value: number) => void): void {
    const n = this.perSlot[s] as number;
    const values = this.values;
    for (let i = 0; i < n; i++) {
      each(values[this.head] as number);
      this.head = (this.head + 1) % values.length;
    }
    this.length -= n;
    this.perSlot[s] = 0;
  }

  /** Calls `each` with every value held, oldest first. */
  forEach(each: (value: number) => void): void {
    const values = this.values;
    for (let i = 0; i < this.length; i++) each(values[(this.head + i) % values.length] as number);
  }

  clear(): void {
    this.head = 0;
    this.length = 0;
    this.perSlot.fill(0);
  }

  /** Heap bytes: the ring and the per-slot counts (two arrays) and the object (`footprint.ts`). */
  get estimatedFootprintInBytes(): number {
    return arrayBytes(this.values.byteLength + this.perSlot.byteLength, 2, 2) + 72;
  }

  private grow(): boolean {
    const old = this.values;
    if (old.length >= this.capacity) return false;
    const size = Math.min(this.capacity, Math.max(16, old.length * 2));
    const next = new Uint16Array(size);
    for (let i = 0; i < this.length; i++) next[i] = old[(this.head + i) % old.length] as number;
    this.values = next;
    this.head = 0;
    return true;
  }
}
