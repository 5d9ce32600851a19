/**
 * What a router keeps per peer across route calls, read for every candidate of every call:
 *
 * - its reservations — units sent to the peer that its advertised state does not show yet: a ring of
 *   bookings in time order (key id, booked at, expires at) and a count per key id;
 * - the queue depths of the last view of the peer it scored, by key id, filled on first read and kept
 *   until a different view object arrives (views are immutable: a new advert is a new view).
 *
 * Nothing is allocated per read or per booking once the arrays have grown to the working size. Keys
 * without an id (past `QueueKeys.limit`) are counted in a map and read from the view by name.
 */
import type { QueueKeys } from "./queue-keys.js";
import type { PeerView } from "./types.js";

export class PeerSlot {
  /** Live bookings, all keys (as of the last `expire`). */
  total = 0;
  private head = 0;
  private mask = 7;
  private ids = new Int32Array(8);
  private names: string[] = new Array<string>(8).fill("");
  private at = new Float64Array(8);
  private expires = new Float64Array(8);
  private counts = new Float64Array(8);
  private overflow: Map<string, number> | undefined;

  private view: PeerView | undefined;
  private generation = 1;
  private depth = new Float64Array(8);
  private stamp = new Int32Array(8);

  constructor(
    private readonly keys: QueueKeys,
    private readonly ttl: number,
  ) {}

  /** Book one unit of `key` (id `id`, or -1) at `now`. */
  book(id: number, key: string, now: number): void {
    if (this.total > this.mask) this.growRing();
    const i = (this.head + this.total) & this.mask;
    this.ids[i] = id;
    this.names[i] = key;
    this.at[i] = now;
    this.expires[i] = now + this.ttl;
    this.total += 1;
    if (id >= 0 && id < this.counts.length) this.counts[id]! += 1;
    else this.count(id, key);
  }

  private count(id: number, key: string): void {
    if (id >= 0) {
      this.growKeys(id);
      this.counts[id]! += 1;
    } else {
      this.overflow ??= new Map();
      this.overflow.set(key, (this.overflow.get(key) ?? 0) + 1);
    }
  }

  /** Drop bookings expired at `now`; returns the live total. */
  expire(now: number): number {
    while (this.total > 0 && this.expires[this.head]! <= now) this.dropOldest();
    return this.total;
  }

  /** Drop bookings made at or before `stateAt` (a state taken then already counts them). */
  settle(stateAt: number): void {
    while (this.total > 0 && this.at[this.head]! <= stateAt) this.dropOldest();
  }

  /** Live bookings of key `id` / `key` (as of the last `expire`). */
  reserved(id: number, key: string): number {
    if (this.total === 0) return 0;
    if (id >= 0) return id < this.counts.length ? this.counts[id]! : 0;
    return this.overflow?.get(key) ?? 0;
  }

  /**
   * Depth of key `id` (or of `key` by name when it has no id) at this peer: advertised in `view` — cached
   * per view object — plus reserved. `view` must be this peer's.
   */
  queue(view: PeerView, id: number, key: string): number {
    // Fast path, small enough to inline into the scoring loop: a cached depth.
    if (view === this.view && id >= 0 && id < this.stamp.length && this.stamp[id] === this.generation) {
      return this.total === 0 ? this.depth[id]! : this.depth[id]! + this.counts[id]!;
    }
    return this.queueSlow(view, id, key);
  }

  private queueSlow(view: PeerView, id: number, key: string): number {
    if (id < 0) return (view.queues[key] ?? 0) + this.reserved(id, key);
    if (view !== this.view) {
      this.view = view;
      this.generation = (this.generation + 1) & 0x7fffffff || 1;
    }
    if (id >= this.stamp.length) this.growKeys(id);
    const depth = view.queues[this.keys.name(id)] ?? 0;
    this.depth[id] = depth;
    this.stamp[id] = this.generation;
    return depth + this.counts[id]!;
  }

  private growKeys(id: number): void {
    const size = Math.max(this.stamp.length * 2, id + 1);
    const stamp = new Int32Array(size);
    stamp.set(this.stamp);
    const depth = new Float64Array(size);
    depth.set(this.depth);
    const counts = new Float64Array(size);
    counts.set(this.counts);
    this.stamp = stamp;
    this.depth = depth;
    this.counts = counts;
  }

  private dropOldest(): void {
    const h = this.head;
    const id = this.ids[h]!;
    if (id >= 0) this.counts[id]! -= 1;
    else {
      const key = this.names[h]!;
      const left = (this.overflow!.get(key) ?? 1) - 1;
      if (left === 0) this.overflow!.delete(key);
      else this.overflow!.set(key, left);
    }
    this.head = (h + 1) & this.mask;
    this.total -= 1;
  }

  private growRing(): void {
    const size = (this.mask + 1) * 2;
    const ids = new Int32Array(size);
    const names = new Array<string>(size).fill("");
    const at = new Float64Array(size);
    const expires = new Float64Array(size);
    for (let n = 0; n < this.total; n++) {
      const i = (this.head + n) & this.mask;
      ids[n] = this.ids[i]!;
      names[n] = this.names[i]!;
      at[n] = this.at[i]!;
      expires[n] = this.expires[i]!;
    }
    this.ids = ids;
    this.names = names;
    this.at = at;
    this.expires = expires;
    this.head = 0;
    this.mask = size - 1;
  }
}
