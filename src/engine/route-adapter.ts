/**
 * Step 3 by src/routing: an adapter from a routing `Router` (MABP, BP, JSQ, affinity, random, ...) to the
 * engine's `FanoutRouter`. It scores the candidates on a `PeerViewBook`'s views (state piggybacked on
 * Branch replies and `State` polls), books a reservation on every peer it picks so concurrent fan-outs see
 * each other's backlog, and the reply's piggybacked state releases it.
 *
 * Its choice says whether every chosen peer is speculation-feasible (fresh p99, from the engine's
 * LatencyBook, within the remaining budget); when one is not, `decide` does not speculate
 * (`speculation-infeasible-peer`). `speculation: "strict"` picks feasible peers first, by score;
 * `"auto"` (default) is strict for quorum fan-outs and by score for all-of-n ones, whose fan-out p99 is
 * at least every member's, so an infeasible member rarely leaves a speculation to lose.
 */
import type { PeerId } from "../estimate/types.js";
import type { PeerViewBook } from "../routing/peer-view-book.js";
import { contextRouteTask } from "../routing/context-task.js";
import type { PressureBreakdown } from "../routing/pressure.js";
import type { PeerView, RouteContext as RoutingContext, RouteTask, Router } from "../routing/types.js";
import type { FanoutRouteContext, RouteChoice } from "./fanout-router.js";
import type { Task } from "./transport.js";

export interface RouteAdapterOptions {
  readonly router: Router;
  readonly views: PeerViewBook;
  /** The routing task of an engine task. Default: `contextRouteTask(task.payload)`. */
  readonly taskOf?: (task: Task) => RouteTask;
  /** Per-unit transfer penalty to a peer (`d_ij`). Default 0. */
  readonly costOf?: (peer: PeerId) => number;
  /** Default "auto" (see the module comment). */
  readonly speculation?: "auto" | "strict";
  /** Score components of a pick, for the branch span (e.g. `explainMabp` with the router's primitives). */
  readonly explain?: (task: RouteTask, view: PeerView) => PressureBreakdown;
}

/** Why a peer got a branch: what the branch span shows (`tailswarm.route.*`). */
export interface RouteExplanation {
  readonly policy: string;
  readonly rank: number;
  /** The pick obeyed the speculation rule (fresh p99 within the budget). */
  readonly speculationFeasible: boolean;
  readonly viewFreshness: "fresh" | "stale" | "unknown";
  readonly backlog: number;
  readonly hit: boolean;
  readonly breakdown?: PressureBreakdown;
}

/**
 * @example
 * const views = new PeerViewBook();
 * const router = createRouter("mabp", { primitives, reservationTtl: 500 });
 * views.onUpdate((peer, at) => router.settle(peer, at));
 * const routing = new RouteAdapter({ router, views });
 * await coordinator.fanOut(task, { peers, k: 1, budgetMs: 500, model, router: routing.route });
 */
export class RouteAdapter {
  readonly #o: RouteAdapterOptions;
  readonly #taskOf: (task: Task) => RouteTask;
  readonly #explained = new WeakMap<object, Map<PeerId, RouteExplanation>>();

  constructor(options: RouteAdapterOptions) {
    this.#o = options;
    this.#taskOf = options.taskOf ?? ((t) => contextRouteTask(t.payload));
  }

  get policy(): string {
    return this.#o.router.name;
  }

  /** The engine's `router` option: the chosen peers and whether all of them are speculation-feasible. */
  readonly route = (candidates: readonly PeerId[], k: number, ctx: FanoutRouteContext): RouteChoice =>
    this.#route(candidates, k, ctx);

  /** Why `peer` got a branch of `task` (the task object given to fanOut), if this adapter routed it. */
  explanation(task: object, peer: PeerId): RouteExplanation | undefined {
    return this.#explained.get(task)?.get(peer);
  }

  #route(candidates: readonly PeerId[], k: number, ctx: FanoutRouteContext): RouteChoice {
    const { router, views, costOf } = this.#o;
    const now = ctx.now;
    const task = this.#taskOf(ctx.task as Task);
    const viewList = views.views(candidates, now);
    const p99Of = (peer: PeerId): number | undefined => {
      const e = ctx.estimates.estimate(peer, now);
      return e.status === "fresh" ? e.p99Ms : undefined;
    };
    const strict =
      this.#o.speculation === "strict" || (ctx.requirement?.kind === "quorum" && ctx.requirement.k < k);
    const base: RoutingContext = { now, ...(costOf === undefined ? {} : { costOf }) };
    const spec: RoutingContext = { ...base, speculative: true, budgetMs: ctx.budgetMs, p99Of };
    let chosen: PeerId[] = strict ? router.route(task, viewList, k, spec) : [];
    if (chosen.length < k) {
      const taken = new Set(chosen);
      const rest = viewList.filter((v) => !taken.has(v.id));
      chosen = chosen.concat(router.route(task, rest, k - chosen.length, base));
    }
    if (chosen.length < k) {
      // Every remaining peer is at its admission limit: the least loaded ones get the branch (and may
      // refuse it — a drop), since the engine needs k peers.
      const taken = new Set(chosen);
      const rest = viewList.filter((v) => !taken.has(v.id)).sort((a, b) => a.backlog - b.backlog);
      chosen = chosen.concat(rest.slice(0, k - chosen.length).map((v) => v.id));
    }
    const explained = this.#record(ctx, task, chosen, viewList, p99Of);
    return { peers: chosen, speculationFeasible: explained.every((e) => e.speculationFeasible) };
  }

  #record(
    ctx: FanoutRouteContext,
    task: RouteTask,
    chosen: readonly PeerId[],
    viewList: readonly PeerView[],
    p99Of: (peer: PeerId) => number | undefined,
  ): RouteExplanation[] {
    const byId = new Map<PeerId, PeerView>();
    for (const v of viewList) byId.set(v.id, v);
    const out = new Map<PeerId, RouteExplanation>();
    chosen.forEach((peer, rank) => {
      const view = byId.get(peer)!;
      const p99 = p99Of(peer);
      out.set(peer, {
        policy: this.#o.router.name,
        rank,
        speculationFeasible: p99 !== undefined && p99 <= ctx.budgetMs,
        viewFreshness: this.#o.views.freshness(peer, ctx.now),
        backlog: view.backlog,
        hit: task.signature !== undefined && view.signatures.has(task.signature),
        ...(this.#o.explain === undefined ? {} : { breakdown: this.#o.explain(task, view) }),
      });
    });
    if (typeof ctx.task === "object" && ctx.task !== null) this.#explained.set(ctx.task, out);
    return [...out.values()];
  }
}
