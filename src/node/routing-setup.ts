/**
 * The node's routing, from its `routing.*` config keys: a src/routing Router behind the engine's `router`
 * option (RouteAdapter), and a PeerViewBook fed by the state peers piggyback on Branch replies (`onLoad`)
 * and by State polls of peers no branch went to lately. Primitives come from the caller
 * (`deps.primitives`), else the config file (`routing.primitives`), and are then used as given; else the
 * policies that read them (mabp, cost-bp) learn them (Learn-MABP: `observeAnswer` on every answer).
 *
 * @example
 * const routing = createNodeRouting(config.routing, { pool, peers: () => livePeersWithAddresses });
 * const transport = new GrpcTransport({ pool, onLoad: routing.onLoad });
 * new Coordinator({ transport: routing.wrapTransport(transport), ... });
 * coordinator.fanOut(task, { peers, ...routing.fanoutOptions(peers.length) }); // start()/stop() with the node
 */
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import { RouteAdapter } from "../engine/route-adapter.js";
import type { FanoutRouter } from "../engine/fanout-router.js";
import type {
  BranchCallOptions,
  BranchRequest,
  BranchResult,
  PeerTransport,
  Task,
} from "../engine/transport.js";
import type { PeerId } from "../estimate/types.js";
import type { ChannelPool } from "../mesh/channel-pool.js";
import type { PeerLoad__Output } from "../mesh/gen/tailswarm/v1/PeerLoad.js";
import { RoutingStatePoller, viewFeeder } from "../mesh/routing-state-poller.js";
import { configuredPrimitives } from "../routing/configured-primitives.js";
import { contextRouteTask } from "../routing/context-task.js";
import { LearnedPrimitives } from "../routing/learned-primitives.js";
import { observeAnswer } from "../routing/observation.js";
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
  readonly onLoad: (peer: PeerId, load: PeerLoad__Output) => void;
  /** fanOut options for `candidates` live peers: `{}` when routing is off. */
  fanoutOptions(candidates: number): { k?: number; router?: FanoutRouter };
  readonly adapter: RouteAdapter | undefined;
  /**
   * Learn-MABP's profiles, when this node learns its primitives (policy mabp or cost-bp without given
   * primitives); undefined otherwise.
   */
  readonly learned: LearnedPrimitives | undefined;
  /**
   * Where the router's primitives come from: `given` (deps or `routing.primitives`), `learned`
   * (Learn-MABP), or `unit` (unit work, no penalty: the policy does not read them, or routing is off).
   */
  readonly primitivesSource: "given" | "learned" | "unit";
  /** The Coordinator's transport: `transport` with answered branches fed to `learned` (as is when not learning). */
  wrapTransport(transport: PeerTransport): PeerTransport;
  start(): void;
  stop(): void;
}

export interface NodeRoutingDeps {
  readonly pool: ChannelPool;
  readonly peers: () => readonly { readonly id: PeerId; readonly address: string }[];
  readonly clock?: Clock;
  /**
   * Primitives for mabp / cost-bp, given programmatically: when set they are used as they are (ahead of
   * `config.primitives`) and nothing is learned. Default: `config.primitives` when the config file gives
   * them, else Learn-MABP from answered branches, with unit work and no penalty before anything is
   * observed (the node does not know its peers' workloads).
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
      learned: undefined,
      primitivesSource: "unit",
      wrapTransport: (t) => t,
      fanoutOptions: () => ({}),
      start: () => undefined,
      stop: () => undefined,
    };
  }
  const reads = config.policy === "mabp" || config.policy === "cost-bp";
  const given =
    deps.primitives ??
    (config.primitives === undefined ? undefined : configuredPrimitives(config.primitives));
  const learned =
    given === undefined && reads ? new LearnedPrimitives({ get: () => UNIT_PRIMITIVES }) : undefined;
  const primitives = given ?? learned ?? { get: () => UNIT_PRIMITIVES };
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
    learned,
    primitivesSource: given !== undefined && reads ? "given" : learned !== undefined ? "learned" : "unit",
    wrapTransport: (t) => (learned === undefined ? t : new LearningTransport(t, learned)),
    fanoutOptions: (n) => ({ k: config.k === 0 ? n : Math.min(config.k, n), router: adapter.route }),
    start: () => poller.start(),
    stop: () => poller.stop(),
  };
}

/**
 * A transport that feeds every answered branch to Learn-MABP: the routing task of the branch's task
 * (`contextRouteTask`, as the RouteAdapter routes it) and the peer's answer make one observation of
 * that peer. Measurement branches count too: the peer served them in full.
 */
class LearningTransport implements PeerTransport {
  constructor(
    private readonly inner: PeerTransport,
    private readonly learned: LearnedPrimitives,
  ) {}

  async branch(peer: PeerId, req: BranchRequest, options: BranchCallOptions): Promise<BranchResult> {
    const result = await this.inner.branch(peer, req, options);
    if (result.kind === "answer") this.observe(peer, req.task, result.answer, result.serviceMs);
    return result;
  }

  private observe(peer: PeerId, task: Task, answer: unknown, serviceMs: number): void {
    try {
      const o = observeAnswer(contextRouteTask(task.payload), answer, serviceMs);
      if (o !== undefined) this.learned.observe(peer, o.key, o.compat, o.outcome);
    } catch {
      // A reply that cannot be read as an observation teaches nothing; the branch's result stands.
    }
  }
}
