/**
 * Short-lived reservations: what a router has sent to a peer but the peer has not yet advertised. A
 * reservation is added to the peer's queue view until it expires (TTL) or a state advertised after it
 * arrives (`settle`), so concurrent decisions do not herd onto one peer.
 *
 * The book holds one `PeerSlot` per peer booked on (its bookings, and the router's cache of the peer's
 * advertised depths) and numbers queue keys (`QueueKeys`), so that the router's per-candidate reads are
 * array reads. Peers never booked on have no slot (a map miss is the cheapest read).
 */
import type { PeerId } from "../estimate/types.js";
import { PeerSlot } from "./peer-slot.js";
import { QueueKeys } from "./queue-keys.js";

/** Peers kept before those with nothing booked are forgotten (peer ids churn: restarts, scaling). */
const MAX_SLOTS = 10_000;

/**
 * @example
 * const book = new ReservationBook(250);
 * book.book("peer-a", "rag/0", clock.now());
 * book.queue("peer-a", "rag/0", clock.now()); // 1
 * book.settle("peer-a", reply.stateAt);       // the reply's state covers it
 */
export class ReservationBook {
  private readonly slots = new Map<PeerId, PeerSlot>();

  /**
   * @param ttlMs how long a reservation counts without a fresher state (same unit as `now`); 0: none are kept.
   * @param keys the numbering of queue keys (a router shares it with its scoring batch).
   */
  constructor(
    readonly ttlMs: number,
    readonly keys = new QueueKeys(),
  ) {}

  /** `peer`'s slot, created on first use. */
  slot(peer: PeerId): PeerSlot {
    let s = this.slots.get(peer);
    if (s === undefined) {
      if (this.slots.size >= MAX_SLOTS) this.prune();
      s = new PeerSlot(this.keys, this.ttlMs);
      this.slots.set(peer, s);
    }
    return s;
  }

  /** Forget peers with nothing booked (their cached depths are refilled on the next read). */
  private prune(): void {
    for (const [peer, s] of this.slots) if (s.total === 0) this.slots.delete(peer);
  }

  /** `peer`'s slot with bookings expired at `now` dropped; undefined when nothing was ever booked on it. */
  live(peer: PeerId, now: number): PeerSlot | undefined {
    const s = this.slots.get(peer);
    if (s !== undefined && s.total > 0) s.expire(now);
    return s;
  }

  book(peer: PeerId, key: string, now: number): void {
    if (this.ttlMs > 0) this.slot(peer).book(this.keys.id(key), key, now);
  }

  /** Reserved units of `key` on `peer` at `now`. */
  queue(peer: PeerId, key: string, now: number): number {
    return this.live(peer, now)?.reserved(this.keys.id(key), key) ?? 0;
  }

  /** Reserved units of all keys on `peer` at `now`. */
  total(peer: PeerId, now: number): number {
    return this.live(peer, now)?.total ?? 0;
  }

  /** Drop reservations on `peer` booked at or before `stateAt` (the state already counts them). */
  settle(peer: PeerId, stateAt: number): void {
    this.slots.get(peer)?.settle(stateAt);
  }
}
