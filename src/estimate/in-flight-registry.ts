import { TailswarmError } from "../errors.js";
import { arrayBytes } from "./footprint.js";

/**
 * A bounded set of calls in flight to one peer: the start time of each, in fixed slots. A slot is claimed by
 * `add` and released by `remove` with the token it was given, so a late `remove` for a slot that has been
 * expired and reused is ignored. Calls past `capacity` are untracked: only their count and the latest start
 * among them are kept, and each counts as censored at that youngest one's age, at most its own (a lower
 * bound stays one); `removeUntracked` ends one. A slot is its start
 * and token (12 bytes, no free or used lists): `add` and `ages` scan the slots, at most `capacity` (24 by
 * default) a peer.
 *
 * @example
 * const r = new InFlightRegistry(256);
 * const slot = r.add(now); const token = r.token(slot);
 * r.remove(slot, token);
 */
export class InFlightRegistry {
  /** Start time of each slot's call; its token, 0 while the slot is free. */
  private start: Float64Array;
  private tokens: Uint32Array;
  private nextToken = 1;
  /** Slots allocated so far; grows by doubling up to `capacity`. */
  private allocated = 0;
  private usedCount = 0;
  /** Where `add` looks for a free slot first (slots below it were in use when it last looked). */
  private freeFrom = 0;
  /** The ages `ages` wrote, ascending (the first `size` of them; grown with the calls in flight). */
  agesMs: Float64Array = new Float64Array(0);
  /** The latest start among the calls `ages` kept (−Infinity when none). */
  newestStartMs = -Infinity;
  /** Calls in flight that found the registry full (past `capacity`). */
  untracked = 0;
  /** The latest start among the untracked calls (−Infinity when none): no untracked call started later. */
  untrackedNewestStartMs = -Infinity;
  /** Untracked calls started before this were dropped from the count (expired or reset): their ends are ignored. */
  private untrackedFromMs = -Infinity;

  constructor(readonly capacity: number) {
    this.start = new Float64Array(0);
    this.tokens = new Uint32Array(0);
  }

  /**
   * Heap bytes: the slot arrays (they grow with the concurrency actually seen, up to `capacity`), the ages
   * and the object with the untracked calls' two bounds it boxes (16 each; `footprint.ts`).
   */
  get estimatedFootprintInBytes(): number {
    return arrayBytes(this.allocated * SLOT_BYTES + this.agesMs.byteLength, 3, 3) + 112 + 2 * 16;
  }

  get size(): number {
    return this.usedCount;
  }

  /** Claims a slot for a call started at `startMs`; −1 when full. */
  add(startMs: number): number {
    if (this.usedCount === this.allocated && !this.grow()) {
      this.untracked++;
      if (startMs > this.untrackedNewestStartMs) this.untrackedNewestStartMs = startMs;
      return -1;
    }
    const tokens = this.tokens;
    let slot = this.freeFrom;
    // a free slot lies at or past freeFrom while usedCount < allocated; the bound guards a count gone wrong
    while (slot < this.allocated && tokens[slot] !== 0) slot++;
    if (slot === this.allocated)
      throw new TailswarmError("INTERNAL", "InFlightRegistry: no free slot below its count");
    this.freeFrom = slot + 1;
    this.start[slot] = startMs;
    tokens[slot] = this.nextToken;
    this.nextToken = this.nextToken === 0xffffffff ? 1 : this.nextToken + 1;
    this.usedCount++;
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
   * Ends an untracked call started at `startMs`. The latest start stays a bound for the rest (none started
   * later); it is cleared with the last one.
   */
  removeUntracked(startMs: number): void {
    if (this.untracked === 0 || startMs < this.untrackedFromMs) return;
    if (--this.untracked === 0) this.untrackedNewestStartMs = -Infinity;
  }

  /**
   * Drops calls started more than `windowMs` before `nowMs` and writes the ages (`nowMs − start`, >= 0) of
   * the others into `agesMs`, sorted ascending, and the latest start among them into `newestStartMs`
   * (−Infinity when none); returns their count. Nothing is allocated unless the calls outgrow the array:
   * the window, not its start, is passed and the newest start is a field, not a return, as V8 boxes a
   * number computed for, or returned by, a call it does not inline, once per peer and estimate. The
   * untracked calls are dropped too once the latest of them started before the window.
   */
  ages(nowMs: number, windowMs: number): number {
    const oldestStartMs = nowMs - windowMs;
    if (this.untracked > 0 && this.untrackedNewestStartMs < oldestStartMs) this.dropUntracked(oldestStartMs);
    if (this.agesMs.length < this.usedCount) {
      this.agesMs = new Float64Array(
        Math.min(Math.max(this.usedCount, this.agesMs.length * 2, 4), this.capacity),
      );
    }
    const buf = this.agesMs;
    const tokens = this.tokens;
    let n = 0;
    let newest = -Infinity;
    for (let slot = 0; slot < this.allocated && n < this.usedCount; slot++) {
      if (tokens[slot] === 0) continue;
      const start = this.start[slot] as number;
      if (start < oldestStartMs) {
        this.release(slot);
        continue;
      }
      const age = nowMs - start;
      buf[n++] = age > 0 ? age : 0;
      if (start > newest) newest = start;
    }
    this.newestStartMs = newest;
    if (n > 1) sortPrefix(buf, n);
    return n;
  }

  /** Forgets every call (peer restart); their later `remove`s are ignored (the owner ignores untracked ones). */
  reset(): void {
    this.tokens.fill(0);
    this.usedCount = 0;
    this.freeFrom = 0;
    this.dropUntracked(-Infinity);
  }

  /** Forgets the untracked calls; the ends of those started before `fromMs` are ignored. */
  private dropUntracked(fromMs: number): void {
    this.untracked = 0;
    this.untrackedNewestStartMs = -Infinity;
    this.untrackedFromMs = fromMs;
  }

  private grow(): boolean {
    const old = this.allocated;
    const size = Math.min(this.capacity, Math.max(8, old * 2));
    if (size <= old) return false;
    const start = new Float64Array(size);
    start.set(this.start);
    const tokens = new Uint32Array(size);
    tokens.set(this.tokens);
    this.start = start;
    this.tokens = tokens;
    this.allocated = size;
    this.freeFrom = old;
    return true;
  }

  private release(slot: number): void {
    this.tokens[slot] = 0;
    this.usedCount--;
    if (slot < this.freeFrom) this.freeFrom = slot;
  }
}

/** Bytes of one slot: its start (8) and token (4). */
const SLOT_BYTES = 12;

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
