/**
 * One row of the agentic-context comparison: a coordinator (the real engine: Coordinator over
 * GrpcTransport, LatencyBook, RouteAdapter on a PeerViewBook fed by piggybacked state and State polls)
 * sends the seeded request stream, open loop, one branch per request (k = 1), to the fleet, routed by one
 * policy. Returns one record per request.
 */
import type { Clock } from "../../clock/clock.js";
import { systemClock } from "../../clock/clock.js";
import { predicateModel } from "../../decision/predicate-model.js";
import { Coordinator } from "../../engine/coordinator.js";
import type { FanoutObserver } from "../../engine/outcome.js";
import { RouteAdapter } from "../../engine/route-adapter.js";
import type { PeerTransport } from "../../engine/transport.js";
import { LatencyBook } from "../../estimate/latency-book.js";
import { ChannelPool } from "../../mesh/channel-pool.js";
import { GrpcTransport } from "../../mesh/grpc-transport.js";
import { RoutingStatePoller, viewFeeder } from "../../mesh/routing-state-poller.js";
import type { ContextAnswer } from "../../peers/context-worker.js";
import { PeerViewBook } from "../../routing/peer-view-book.js";
import { explainMabp } from "../../routing/policies/mabp.js";
import type { Primitives } from "../../routing/primitives.js";
import { createRouter } from "../../routing/router.js";
import { createRng } from "../../util/rng.js";
import type { AgenticScenario, PolicyRow } from "./agentic-scenario.js";
import type { Fleet } from "./peer-fleet.js";
import type { ContextRequest } from "./request-mix.js";

export interface RequestRecord {
  readonly atMs: number;
  readonly measured: boolean;
  /** answered | dropped (refused, failed or degraded) | late (deadline passed without an answer) */
  readonly outcome: "answered" | "dropped" | "late";
  readonly e2eMs: number;
  readonly peer: string;
  readonly hit: boolean;
  readonly work: number;
  readonly downstream: number;
  /** The routing decision's CPU time, µs. */
  readonly routeUs: number;
}

export interface RunPolicyOptions {
  readonly scenario: AgenticScenario;
  readonly row: PolicyRow;
  readonly stream: readonly ContextRequest[];
  readonly fleet: Fleet;
  readonly primitives: Primitives;
  /** Telemetry hooks (a FanoutTracer, metrics) and a transport wrapper (instrumentTransport). */
  readonly observer?: FanoutObserver;
  readonly wrapTransport?: (t: PeerTransport, adapter: RouteAdapter) => PeerTransport;
  readonly onViews?: (views: PeerViewBook) => void;
  readonly clock?: Clock;
}

const model = predicateModel<ContextAnswer, ContextAnswer | null>({
  name: "first-answer",
  prior: null,
  decide: (answers) => answers.values().next().value ?? null,
  canFlip: (answers, outstanding) => answers.size === 0 && outstanding.length > 0,
});

export async function runPolicy(o: RunPolicyOptions): Promise<RequestRecord[]> {
  const s = o.scenario;
  const clock = o.clock ?? systemClock;
  const ids = o.fleet.peers.map((p) => p.id);
  const addressOf = new Map(o.fleet.peers.map((p) => [p.id, p.address]));
  const pool = new ChannelPool();
  const views = new PeerViewBook({ staleMs: s.staleMs });
  o.onViews?.(views);
  const router = createRouter(o.row.routing, {
    primitives: o.primitives,
    nu: s.nu,
    reservationTtl: s.reservationTtlMs,
    random: createRng(s.seed),
  });
  views.onUpdate((peer, at) => router.settle(peer, at));
  const adapter = new RouteAdapter({
    router,
    views,
    ...(o.row.routing === "mabp"
      ? { explain: (task, view) => explainMabp(task, view, o.primitives, s.nu) }
      : {}),
  });
  const grpc = new GrpcTransport({
    pool,
    clock,
    addressOf: (p) => addressOf.get(p),
    onLoad: viewFeeder(views, clock),
  });
  const transport = o.wrapTransport?.(grpc, adapter) ?? grpc;
  const book = new LatencyBook({ windowMs: 5_000, minSamples: 20 }, clock);
  const coordinator = new Coordinator({
    transport,
    book,
    clock,
    nodeId: "ingress",
    ...(o.observer === undefined ? {} : { observer: o.observer }),
  });
  const poller = new RoutingStatePoller({ pool, views, peers: () => o.fleet.peers, clock });
  poller.start();
  const warmupMs = s.warmupS * 1000;
  const route = adapter.route;
  let routeUs = 0;
  const timedRoute: typeof route = (candidates, k, ctx) => {
    const t = performance.now();
    const chosen = route(candidates, k, ctx);
    routeUs = (performance.now() - t) * 1000;
    return chosen;
  };

  const one = async (r: ContextRequest): Promise<RequestRecord> => {
    const t0 = clock.now();
    const task = { kind: "context", payload: { requestClass: r.requestClass, context: r.context } };
    const base = { atMs: r.atMs, measured: r.atMs >= warmupMs };
    try {
      const out = await coordinator.fanOut(task, {
        peers: ids,
        k: 1,
        budgetMs: s.budgetMs,
        model,
        usePriorOnDegrade: true,
        router: timedRoute,
      });
      const spent = routeUs;
      const b = out.branches[0];
      const e2eMs = clock.now() - t0;
      const answer = b?.result.kind === "answer" ? (b.result.answer as ContextAnswer) : undefined;
      if (answer !== undefined && b !== undefined && b.outcome === "committed") {
        return { ...base, outcome: "answered", e2eMs, peer: b.peer, ...pick(answer), routeUs: spent };
      }
      const late = b !== undefined && (b.result.kind === "deadline" || b.outcome === "late");
      return {
        ...base,
        outcome: late ? "late" : "dropped",
        e2eMs,
        peer: b?.peer ?? "",
        hit: false,
        work: 0,
        downstream: 0,
        routeUs: spent,
      };
    } catch {
      return {
        ...base,
        outcome: "dropped",
        e2eMs: clock.now() - t0,
        peer: "",
        hit: false,
        work: 0,
        downstream: 0,
        routeUs: 0,
      };
    }
  };

  const start = clock.now();
  const pending: Promise<RequestRecord>[] = [];
  try {
    for (const r of o.stream) {
      const wait = start + r.atMs - clock.now();
      if (wait > 1) await new Promise<void>((res) => clock.setTimer(res, wait));
      pending.push(one(r));
    }
    return await Promise.all(pending);
  } finally {
    poller.stop();
    grpc.close();
    pool.closeAll();
  }
}

function pick(a: ContextAnswer): { hit: boolean; work: number; downstream: number } {
  return { hit: a.hit === true, work: Number(a.work) || 0, downstream: Number(a.downstream) || 0 };
}
