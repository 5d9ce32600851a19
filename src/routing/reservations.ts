/**
 * Short-lived reservations: what a router has sent to a peer but the peer has not yet advertised. A
 * reservation is added to the peer's queue view until it expires (TTL) or a state advertised after it
 * arrives (`settle`), so concurrent decisions do not herd onto one peer.
 */
import type { PeerId } from "../estimate/types.js";

interface Booking {
  readonly key: string;
  readonly at: number;
  readonly expires: number;
}

interface PeerBook {
  bookings: Booking[];
  byKey: Map<string, number>;
  total: number;
}

/**
 * @example
 * const book = new ReservationBook(250);
 * book.book("peer-a", "rag/0", clock.now());
 * book.queue("peer-a", "rag/0", clock.now()); // 1
 * book.settle("peer-a", reply.stateAt);       // the reply's state covers it
 */
export class ReservationBook {
  private readonly peers = new Map<PeerId, PeerBook>();

  /** @param ttlMs how long a reservation counts without a fresher state (same unit as `now`). */
  constructor(readonly ttlMs: number) {}

  book(peer: PeerId, key: string, now: number): void {
    let b = this.peers.get(peer);
    if (b === undefined) {
      b = { bookings: [], byKey: new Map(), total: 0 };
      this.peers.set(peer, b);
    }
    b.bookings.push({ key, at: now, expires: now + this.ttlMs });
    b.byKey.set(key, (b.byKey.get(key) ?? 0) + 1);
    b.total += 1;
  }

  /** Reserved units of `key` on `peer` at `now`. */
  queue(peer: PeerId, key: string, now: number): number {
    const b = this.live(peer, now);
    return b === undefined ? 0 : (b.byKey.get(key) ?? 0);
  }

  /** Reserved units of all keys on `peer` at `now`. */
  total(peer: PeerId, now: number): number {
    return this.live(peer, now)?.total ?? 0;
  }

  /** Drop reservations on `peer` booked at or before `stateAt` (the state already counts them). */
  settle(peer: PeerId, stateAt: number): void {
    const b = this.peers.get(peer);
    if (b === undefined) return;
    this.dropWhile(b, (x) => x.at <= stateAt);
  }

  private live(peer: PeerId, now: number): PeerBook | undefined {
    const b = this.peers.get(peer);
    if (b === undefined || b.total === 0) return b;
    if (b.bookings[0]!.expires <= now) this.dropWhile(b, (x) => x.expires <= now);
    return b;
  }

  /** Bookings are in time order (callers' clocks are monotonic), so both drops take a prefix. */
  private dropWhile(b: PeerBook, pred: (x: Booking) => boolean): void {
    let n = 0;
    while (n < b.bookings.length && pred(b.bookings[n]!)) {
      const x = b.bookings[n]!;
      const left = (b.byKey.get(x.key) ?? 1) - 1;
      if (left === 0) b.byKey.delete(x.key);
      else b.byKey.set(x.key, left);
      n++;
    }
    if (n > 0) {
      b.bookings.splice(0, n);
      b.total -= n;
    }
  }
}
