/**
 * Telemetry of routing (memory-augmented backpressure): each pick's score components on its branch
 * span, and per-peer routing state read from the PeerViewBook when a reader collects.
 * `routeSpanTransport` goes *inside* `instrumentTransport`, which gives it the branch span's context
 * as `traceContext`.
 */
import { context, trace } from "@opentelemetry/api";
import type { Attributes, BatchObservableResult, Meter } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { RouteExplanation } from "../engine/route-adapter.js";
import type { BranchCallOptions, BranchRequest, BranchResult, PeerTransport } from "../engine/transport.js";
import type { PeerId } from "../estimate/types.js";
import type { PeerViewBook } from "../routing/peer-view-book.js";
import { PerPeerGauges } from "./per-peer-gauges.js";
import type { PeerInstrument } from "./per-peer-gauges.js";

/** Branch span attributes of a routed branch. */
export const ROUTE_ATTR = {
  policy: "tailswarm.route.policy",
  rank: "tailswarm.route.rank",
  score: "tailswarm.route.score",
  queueDifferential: "tailswarm.route.queue_differential",
  successorPressure: "tailswarm.route.successor_pressure",
  penalty: "tailswarm.route.penalty",
  work: "tailswarm.route.work",
  hit: "tailswarm.route.hit",
  backlog: "tailswarm.route.backlog",
  viewFreshness: "tailswarm.route.view_freshness",
  speculationFeasible: "tailswarm.route.speculation_feasible",
} as const;

const ROUTE_GAUGES = {
  backlog: {
    name: "tailswarm.route.peer.backlog",
    description: "Jobs waiting or in service at the peer, as it last advertised",
    unit: "{job}",
  },
  memoryUsed: {
    name: "tailswarm.route.peer.memory_used",
    description: "Memory the peer's resident context objects use, in object-size units",
    unit: "{size_unit}",
  },
  hitRatio: {
    name: "tailswarm.route.peer.hit_ratio",
    description: "Share of the peer's memory-stage jobs whose context was resident (since it started)",
    unit: "1",
  },
  churn: {
    name: "tailswarm.route.peer.churn",
    description: "Memory objects the peer inserted or evicted (since it started)",
    unit: "{object}",
    int: true,
    counter: true,
  },
} as const satisfies Record<string, PeerInstrument>;

/** Names of the per-peer routing instruments. */
export const ROUTE_METRIC = Object.fromEntries(Object.entries(ROUTE_GAUGES).map(([k, v]) => [k, v.name])) as {
  readonly [K in keyof typeof ROUTE_GAUGES]: (typeof ROUTE_GAUGES)[K]["name"];
};

function routeAttributes(e: RouteExplanation): Attributes {
  const a: Attributes = {
    [ROUTE_ATTR.policy]: e.policy,
    [ROUTE_ATTR.rank]: e.rank,
    [ROUTE_ATTR.hit]: e.hit,
    [ROUTE_ATTR.backlog]: e.backlog,
    [ROUTE_ATTR.viewFreshness]: e.viewFreshness,
    [ROUTE_ATTR.speculationFeasible]: e.speculationFeasible,
  };
  const b = e.breakdown;
  if (b !== undefined) {
    a[ROUTE_ATTR.score] = b.score;
    a[ROUTE_ATTR.queueDifferential] = b.queueIn - b.queueDest;
    a[ROUTE_ATTR.successorPressure] = b.successorPressure;
    a[ROUTE_ATTR.penalty] = b.penalty + b.transferPenalty;
    a[ROUTE_ATTR.work] = b.work;
  }
  return a;
}

/** What explains a routed branch (a `RouteAdapter`). */
export interface RouteExplainer {
  explanation(task: object, peer: PeerId): RouteExplanation | undefined;
}

/** What routing telemetry reads: the router's explanations and the peer views it routed on. */
export interface RoutingTelemetrySource extends RouteExplainer {
  readonly views: PeerViewBook;
}

/**
 * Adds the routing attributes to the branch span (the span of `traceContext`, default the active one)
 * before sending.
 *
 * @example
 * const transport = instrumentTransport(routeSpanTransport(grpcTransport, adapter), { tracer });
 */
export function routeSpanTransport(inner: PeerTransport, explainer: RouteExplainer): PeerTransport {
  return {
    branch(peer: PeerId, req: BranchRequest, options: BranchCallOptions): Promise<BranchResult> {
      const span = trace.getSpan(options.traceContext ?? context.active());
      if (span?.isRecording() === true) {
        const e = explainer.explanation(req.task, peer);
        if (e !== undefined) span.setAttributes(routeAttributes(e));
      }
      return inner.branch(peer, req, options);
    },
  };
}

/**
 * Per-peer backlog and memory use (advertised), hit ratio and churn (cumulative, as the peer reports
 * them) from a PeerViewBook.
 */
export class RoutingGauges extends PerPeerGauges<PeerViewBook, keyof typeof ROUTE_GAUGES> {
  constructor(meter: Meter, clock: Clock, views?: PeerViewBook) {
    super(meter, clock, views, ROUTE_GAUGES);
  }

  protected observe(r: BatchObservableResult, views: PeerViewBook, now: number): void {
    const g = this.instruments;
    for (const peer of views.peers()) {
      const held = views.latest(peer);
      if (held === undefined || views.freshness(peer, now) === "unknown") continue;
      const a = this.attrsOf(peer);
      const view = views.view(peer, now);
      r.observe(g.backlog, view.backlog, a);
      r.observe(g.memoryUsed, view.memoryUsed, a);
      const { served, hits, churn: c } = held.advert;
      if (served !== undefined && served > 0 && hits !== undefined) r.observe(g.hitRatio, hits / served, a);
      if (c !== undefined) r.observe(g.churn, c, a);
    }
  }
}
