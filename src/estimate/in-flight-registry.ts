/**
 * A bounded set of calls in flight to one peer: the start time of each, in fixed slots. A slot is claimed by
 * `add` (or none when full: the call then simply is not censored) and released by `remove` with the token it
 * was given, so a late `remove` for a slot that has been expired and reused is ignored.
 *
 * @example
 * const r = new InFlightRegistry(256);
 * const slot = r.add(now); const token = r.token(slot);
 * r.remove(slot, token);
 */
export class InFlightRegistry {
  private start: Float64Array;
  private tokens: Uint32Array;
  private free: Int32Array;
  private freeTop = 0;
  private nextToken = 1;
  /** Slots in use, densely listed for iteration; `where[slot]` is the position in `used`. */
  private used: Int32Array;
  private where: Int32Array;
  /** Slots allocated so far; grows by doubling up to `capacity`. */
  private allocated = 0;
  private usedCount = 0;
  /** The ages `ages` wrote, ascending (the first `size` of them; grown with the calls in flight). */
  agesMs: Float64Array = new Float64Array(0);
  /** The latest start among the calls `ages` kept (−Infinity when none). */
  newestStartMs = -Infinity;
  /** Calls that found the registry full since the last reset. */
  untracked = 0;

  constructor(readonly capacity: number) {
    this.start = new Float64Array(0);
    this.tokens = new Uint32Array(0);
    this.free = new Int32Array(0);
    this.used = new Int32Array(0);
    this.where = new Int32Array(0);
  }

  /** Bytes held by the slot arrays (they grow with the concurrency actually seen). */
  get estimatedFootprintInBytes(): number {
    return this.allocated * 24 + this.agesMs.byteLength + 64;
  }

  get size(): number {
    return this.usedCount;
  }

  /** Claims a slot for a call started at `startMs`; −1 when full. */
  add(startMs: number): number {
    if (this.freeTop === 0 && !this.grow()) {
      this.untracked++;
      return -1;
    }
    const slot = this.free[--this.freeTop] as number;
    this.start[slot] = startMs;
    this.tokens[slot] = this.nextToken;
    this.nextToken = this.nextToken === 0xffffffff ? 1 : this.nextToken + 1;
    this.where[slot] = this.usedCount;
    this.used[this.usedCount++] = slot;
    return slot;
  }

  token(slot: number): number {
    return this.tokens[slot] as number;
  }

  /** Releases `slot` if it still belongs to `token`. */
  remove(slot: number, token: number): void {
    if (slot < 0 || this.tokens[slot] !== token) return;
    this.release(slot);
  }

  /**
   * Drops calls started more than `windowMs` before `nowMs` and writes the ages (`nowMs − start`, >= 0) of
   * the others into `agesMs`, sorted ascending, and the latest start among them into `newestStartMs`
   * (−Infinity when none); returns their count. Nothing is allocated unless the calls outgrow the array:
   * the window, not its start, is passed and the newest start is a field, not a return, as V8 boxes a
   * number computed for, or returned by, a call it does not inline, once per peer and estimate.
   */
  ages(nowMs: number, windowMs: number): number {
    const oldestStartMs = nowMs - windowMs;
    let i = 0;
    while (i < this.usedCount) {
      const slot = this.used[i] as number;
      if ((this.start[slot] as number) < oldestStartMs) this.release(slot);
      else i++;
    }
    const n = this.usedCount;
    if (this.agesMs.length < n) this.agesMs = new Float64Array(Math.max(n, this.agesMs.length * 2, 4));
    const buf = this.agesMs;
    let newest = -Infinity;
    for (let k = 0; k < n; k++) {
      const start = this.start[this.used[k] as number] as number;
      const age = nowMs - start;
      buf[k] = age > 0 ? age : 0;
      if (start > newest) newest = start;
    }
    this.newestStartMs = newest;
    if (n > 1) sortPrefix(buf, n);
    return n;
  }

  /** Forgets every call (peer restart); their later `remove`s are ignored. */
  reset(): void {
    while (this.usedCount > 0) this.release(this.used[this.usedCount - 1] as number);
    this.untracked = 0;
  }

  private grow(): boolean {
    const old = this.allocated;
    const size = Math.min(this.capacity, Math.max(8, old * 2));
    if (size <= old) return false;
    const widen = <T extends Float64Array | Uint32Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.start = widen(this.start, (n) => new Float64Array(n));
    this.tokens = widen(this.tokens, (n) => new Uint32Array(n));
    this.used = widen(this.used, (n) => new Int32Array(n));
    this.where = widen(this.where, (n) => new Int32Array(n));
    const free = new Int32Array(size);
    free.set(this.free.subarray(0, this.freeTop));
    for (let slot = size - 1; slot >= old; slot--) free[this.freeTop++] = slot;
    this.free = free;
    this.allocated = size;
    return true;
  }

  private release(slot: number): void {
    this.tokens[slot] = 0;
    const pos = this.where[slot] as number;
    const last = this.used[--this.usedCount] as number;
    this.used[pos] = last;
    this.where[last] = pos;
    this.free[this.freeTop++] = slot;
  }
}

/** Up to this many ages are sorted in place by insertion (no view allocated; a peer has a few calls in flight). */
const INSERTION_SORT_MAX = 16;

function sortPrefix(buf: Float64Array, n: number): void {
  if (n > INSERTION_SORT_MAX) {
    buf.subarray(0, n).sort();
    return;
  }
  for (let i = 1; i < n; i++) {
    const v = buf[i] as number;
    let j = i - 1;
    while (j >= 0 && (buf[j] as number) > v) {
      buf[j + 1] = buf[j] as number;
      j--;
    }
    buf[j + 1] = v;
  }
}
