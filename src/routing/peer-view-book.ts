/**
 * The coordinator's book of peers' routing state: the newest advert per peer (from `State` polls and
 * from the state piggybacked on Branch replies), turned into `PeerView`s for a router, with staleness:
 *
 * - fresh (received within `staleMs`): the advert as is;
 * - stale (older): queues kept (the last known backlog is still the best guess, and reservations cover
 *   what this coordinator sent since), memory claims dropped — an object may have been evicted, and a
 *   stale hit is the expensive mistake (K units instead of 1);
 * - unknown (never heard, forgotten after `forgetMs`, or reset on a restart): an empty view.
 *
 * Age is measured on the coordinator's clock from when the advert arrived, so peer clock skew cannot
 * make a view look fresher than it is. Pure: no I/O, no clock of its own.
 */
import type { PeerId } from "../estimate/types.js";
import { checkRange, intRange, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { RoutingAdvert } from "./advert.js";
import { viewFromAdvert } from "./advert.js";
import { SignatureSet } from "./signature.js";
import type { PeerView } from "./types.js";

/** Defaults and ranges: PEER_VIEW_BOOK_DEFAULTS and PEER_VIEW_BOOK_RANGES. */
export interface PeerViewBookOptions {
  /** A view older than this loses its memory claims, ms. */
  readonly staleMs?: number;
  /** A view older than this is unknown (empty), ms; at least `staleMs`. */
  readonly forgetMs?: number;
}

export const PEER_VIEW_BOOK_DEFAULTS: Readonly<Required<PeerViewBookOptions>> = {
  staleMs: 2_000,
  forgetMs: 30_000,
};

export const PEER_VIEW_BOOK_RANGES: Readonly<Record<keyof PeerViewBookOptions, NumberRange>> = {
  staleMs: intRange(1, 3_600_000),
  forgetMs: numberRange(0),
};

export type ViewFreshness = "fresh" | "stale" | "unknown";

interface Entry {
  readonly advert: RoutingAdvert;
  readonly view: PeerView;
  readonly staleView: PeerView;
  readonly receivedAt: number;
}

const NO_SIGNATURES = SignatureSet.bounded([]);

/** Called with the time up to which a peer's new state covers what was sent to it (for `Router.settle`). */
export type ViewListener = (peer: PeerId, coveredUntil: number) => void;

/**
 * @example
 * const views = new PeerViewBook({ staleMs: 1_000 });
 * views.onUpdate((peer, at) => router.settle(peer, at));
 * transport = new GrpcTransport({ onLoad: (peer, load) => load.routing && views.update(peer, advertOf(load.routing), clock.now()) });
 * router.route(task, views.views(candidates, clock.now()), 1, ctx);
 */
export class PeerViewBook {
  readonly staleMs: number;
  readonly forgetMs: number;
  readonly #entries = new Map<PeerId, Entry>();
  readonly #listeners: ViewListener[] = [];

  constructor(options: PeerViewBookOptions = {}) {
    const option = (key: keyof PeerViewBookOptions): number =>
      checkRange(`routing.${key}`, options[key] ?? PEER_VIEW_BOOK_DEFAULTS[key], PEER_VIEW_BOOK_RANGES[key]);
    this.staleMs = option("staleMs");
    this.forgetMs = Math.max(this.staleMs, option("forgetMs"));
  }

  /** Subscribe to updates (a router's `settle`). */
  onUpdate(listener: ViewListener): void {
    this.#listeners.push(listener);
  }

  /**
   * Record `peer`'s advert, received at `receivedAt` (coordinator clock). An advert older than the one
   * held (by its `stateAt`) is ignored — replies can arrive out of order. Returns whether it was kept.
   */
  update(peer: PeerId, advert: RoutingAdvert, receivedAt: number): boolean {
    const held = this.#entries.get(peer);
    if (held !== undefined && advert.stateAt < held.advert.stateAt) return false;
    const view = viewFromAdvert(peer, advert);
    this.#entries.set(peer, {
      advert,
      view,
      staleView: { ...view, signatures: NO_SIGNATURES },
      receivedAt,
    });
    // The peer took its state no later than we received it; use the earlier of the two clocks.
    const covered = Math.min(view.stateAt, receivedAt);
    for (const l of this.#listeners) l(peer, covered);
    return true;
  }

  /** Forget `peer` (it restarted: its memory and queues are gone). */
  reset(peer: PeerId): void {
    this.#entries.delete(peer);
  }

  freshness(peer: PeerId, now: number): ViewFreshness {
    const e = this.#entries.get(peer);
    if (e === undefined) return "unknown";
    const age = now - e.receivedAt;
    if (age > this.forgetMs) return "unknown";
    return age > this.staleMs ? "stale" : "fresh";
  }

  /** The view a router should score for `peer` at `now`. */
  view(peer: PeerId, now: number): PeerView {
    const e = this.#entries.get(peer);
    switch (this.freshness(peer, now)) {
      case "fresh":
        return e!.view;
      case "stale":
        return e!.staleView;
      default:
        return emptyView(peer);
    }
  }

  views(peers: readonly PeerId[], now: number): PeerView[] {
    return peers.map((p) => this.view(p, now));
  }

  /** The newest advert of `peer` and when it arrived (for gauges), or undefined. */
  latest(peer: PeerId): { readonly advert: RoutingAdvert; readonly receivedAt: number } | undefined {
    return this.#entries.get(peer);
  }

  peers(): IterableIterator<PeerId> {
    return this.#entries.keys();
  }
}

/** What a router sees of a peer it knows nothing about: empty queues, no memory. */
export function emptyView(peer: PeerId): PeerView {
  return {
    id: peer,
    queues: {},
    backlog: 0,
    signatures: NO_SIGNATURES,
    memoryUsed: 0,
    memoryBudget: 0,
    capacity: 0,
    stateAt: -Infinity,
  };
}
