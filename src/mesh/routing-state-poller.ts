/**
 * Keeps a `PeerViewBook` fed: `viewFeeder` takes the routing state peers piggyback on Branch replies
 * (`GrpcTransport`'s `onLoad`), and `RoutingStatePoller` calls `State` on peers at an interval — for
 * peers that no branch went to lately, whose views would otherwise go stale and then unknown.
 */
import { Metadata } from "@grpc/grpc-js";
import type { Clock, TimerHandle } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { PeerId } from "../estimate/types.js";
import type { PeerViewBook } from "../routing/peer-view-book.js";
import type { ChannelPool } from "./channel-pool.js";
import { swarmService } from "./proto.js";
import type { PeerLoad__Output } from "./gen/tailswarm/v1/PeerLoad.js";
import type { StateReply__Output } from "./gen/tailswarm/v1/StateReply.js";
import { advertFromWire } from "./routing-state.js";

/**
 * `GrpcTransport`'s `onLoad`, feeding `views`.
 *
 * @example
 * const transport = new GrpcTransport({ pool, onLoad: viewFeeder(views, clock) });
 */
export function viewFeeder(
  views: PeerViewBook,
  clock: Clock = systemClock,
): (peer: PeerId, load: PeerLoad__Output) => void {
  return (peer, load) => {
    if (load.routing) views.update(peer, advertFromWire(load.routing), clock.now());
  };
}

export interface RoutingStatePollerOptions {
  readonly pool: ChannelPool;
  readonly views: PeerViewBook;
  /** The peers to poll and their addresses. */
  readonly peers: () => readonly { readonly id: PeerId; readonly address: string }[];
  /** Poll a peer whose view is older than this, ms. Default: the book's `staleMs` / 2. */
  readonly intervalMs?: number;
  /** Deadline of one State call, ms. Default 1 000. */
  readonly timeoutMs?: number;
  readonly clock?: Clock;
}

/** Polls `State` on peers whose view is getting old. `start()` / `stop()`; `pollOnce()` for tests. */
export class RoutingStatePoller {
  readonly #o: RoutingStatePollerOptions;
  readonly #clock: Clock;
  readonly #interval: number;
  #timer: TimerHandle | undefined;
  #stopped = true;

  constructor(options: RoutingStatePollerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#interval = options.intervalMs ?? Math.max(50, options.views.staleMs / 2);
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    const tick = (): void => {
      if (this.#stopped) return;
      void this.pollOnce().finally(() => {
        if (!this.#stopped) this.#timer = this.#clock.setTimer(tick, this.#interval);
      });
    };
    tick();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** One round: a State call to every peer whose view is older than the interval. */
  async pollOnce(): Promise<void> {
    const now = this.#clock.now();
    const due = this.#o.peers().filter(({ id }) => {
      const held = this.#o.views.latest(id);
      return held === undefined || now - held.receivedAt >= this.#interval;
    });
    await Promise.all(due.map((p) => this.#poll(p.id, p.address)));
  }

  #poll(peer: PeerId, address: string): Promise<void> {
    const m = swarmService().State;
    const client = this.#o.pool.get(address);
    return new Promise((resolve) => {
      client.makeUnaryRequest<Record<string, never>, StateReply__Output>(
        m.path,
        m.requestSerialize as (v: Record<string, never>) => Buffer,
        m.responseDeserialize,
        {},
        new Metadata(),
        { deadline: Date.now() + (this.#o.timeoutMs ?? 1_000) },
        (error, reply) => {
          if (!error && reply?.routing) {
            this.#o.views.update(peer, advertFromWire(reply.routing), this.#clock.now());
          }
          resolve();
        },
      );
    });
  }
}
