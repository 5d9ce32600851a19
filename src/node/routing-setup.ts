/**
 * The node's routing, from its `routing.*` config keys: a src/routing Router behind the engine's
 * `router` option (RouteAdapter), a PeerViewBook fed by the state peers piggyback on Branch replies
 * (`onLoad` for GrpcTransport) and by State polls of peers no branch went to lately.
 *
 * Wiring in the daemon (three lines):
 *   const routing = createNodeRouting(config.routing, { pool, peers: () => live peers with addresses });
 *   new GrpcTransport({ pool, onLoad: routing.onLoad, ... });
 *   coordinator.fanOut(task, { peers, ...routing.fanoutOptions(peers.length), ... });
 * and `routing.start()` / `routing.stop()` with the node.
 */
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { RouteAdapter } from "../engine/route-adapter.js";
import type { Router as EngineRouter } from "../engine/options.js";
import type { PeerId } from "../estimate/types.js";
import type { ChannelPool } from "../mesh/channel-pool.js";
import type { WirePeerLoad } from "../mesh/proto.js";
import { RoutingStatePoller, viewFeeder } from "../mesh/routing-state-poller.js";
import { LearnedPrimitives } from "../routing/learned-primitives.js";
import { PeerViewBook } from "../routing/peer-view-book.js";
import { explainMabp } from "../routing/policies/mabp.js";
import type { Primitives } from "../routing/primitives.js";
import { UNIT_PRIMITIVES } from "../routing/primitives.js";
import { createRouter } from "../routing/router.js";
import type { NodeConfig } from "./config/types.js";

export interface NodeRouting {
  readonly policy: string;
  readonly views: PeerViewBook;
  /** GrpcTransport's `onLoad`. */
  readonly onLoad: (peer: PeerId, load: WirePeerLoad) => void;
  /** fanOut options for `candidates` live peers: `{}` when routing is off. */
  fanoutOptions(candidates: number): { k?: number; router?: EngineRouter };
  readonly adapter: RouteAdapter | undefined;
  start(): void;
  stop(): void;
}

export interface NodeRoutingDeps {
  readonly pool: ChannelPool;
  readonly peers: () => readonly { readonly id: PeerId; readonly address: string }[];
  readonly clock?: Clock;
  /**
   * Primitives for mabp / cost-bp. Default: Learn-MABP with no-reuse priors of unit work (the node
   * does not know its peers' workloads; `LearnedPrimitives.observe` refines them).
   */
  readonly primitives?: Primitives;
}

/**
 * @example
 * const routing = createNodeRouting({ policy: "mabp", k: 1, nu: 5, reservationTtlMs: 500, staleMs: 2000 }, { pool, peers });
 */
export function createNodeRouting(config: NodeConfig["routing"], deps: NodeRoutingDeps): NodeRouting {
  const clock = deps.clock ?? systemClock;
  const views = new PeerViewBook({ staleMs: config.staleMs });
  const onLoad = viewFeeder(views, clock);
  if (config.policy === "none") {
    return {
      policy: "none",
      views,
      onLoad,
      adapter: undefined,
      fanoutOptions: () => ({}),
      start: () => undefined,
      stop: () => undefined,
    };
  }
  const primitives = deps.primitives ?? new LearnedPrimitives({ get: () => UNIT_PRIMITIVES });
  const router = createRouter(config.policy, {
    primitives,
    nu: config.nu,
    reservationTtl: config.reservationTtlMs,
  });
  views.onUpdate((peer, at) => router.settle(peer, at));
  const adapter = new RouteAdapter({
    router,
    views,
    ...(config.policy === "mabp" ? { explain: (t, v) => explainMabp(t, v, primitives, config.nu) } : {}),
  });
  const poller = new RoutingStatePoller({ pool: deps.pool, views, peers: deps.peers, clock });
  return {
    policy: config.policy,
    views,
    onLoad,
    adapter,
    fanoutOptions: (n) => ({ k: config.k === 0 ? n : Math.min(config.k, n), router: adapter.route }),
    start: () => poller.start(),
    stop: () => poller.stop(),
  };
}
