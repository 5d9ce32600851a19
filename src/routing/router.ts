/**
 * The router: feasibility (admission limit, speculation rule), reservations and top-k selection around a
 * policy's Scorer. Policies register by name, like grpc-js load-balancer types.
 */
import { invalid } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { checkRange, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import { createRng } from "../util/rng.js";
import { checkContext, isFeasible } from "./feasibility.js";
import { affinityScorer } from "./policies/affinity.js";
import { bpScorer, costBpScorer, jsqScorer, randomScorer, shortestPathScorer } from "./policies/baselines.js";
import { mabpScorer } from "./policies/mabp.js";
import type { Primitives } from "./primitives.js";
import { ReservationBook } from "./reservations.js";
import { RouteBatch } from "./route-batch.js";
import type { Scorer } from "./scorer.js";
import type { PeerView, RouteContext, RouteTask, Router, RoutingPolicyName } from "./types.js";

export interface RouterOptions {
  /** Primitives `w, p, P` (required by `mabp`; `cost-bp` uses their no-reuse penalty as reference cost). */
  readonly primitives?: Primitives;
  /** Penalty weight ν of the drift-plus-penalty trade-off (default: the paper's). Defaults and ranges: ROUTER_DEFAULTS, ROUTER_RANGES. */
  readonly nu?: number;
  /** Reservation lifetime, in the unit of `ctx.now` (ms in a node); 0 turns reservations off. */
  readonly reservationTtl?: number;
  /** Uniform [0,1) source for tie-breaking. Default: a seeded mulberry32 (deterministic). */
  readonly random?: () => number;
}

export const ROUTER_DEFAULTS: Readonly<Required<Pick<RouterOptions, "nu" | "reservationTtl">>> = {
  nu: 5,
  reservationTtl: 500,
};

export const ROUTER_RANGES: Readonly<Record<keyof typeof ROUTER_DEFAULTS, NumberRange>> = {
  nu: numberRange(0, 1_000_000),
  reservationTtl: numberRange(0, 3_600_000),
};

export type ScorerFactory = (options: RouterOptions) => Scorer;

const registry = new Map<string, ScorerFactory>([
  ["random", () => randomScorer],
  ["shortest-path", () => shortestPathScorer],
  ["jsq", () => jsqScorer],
  ["bp", () => bpScorer],
  ["cost-bp", (o) => costBpScorer(o.nu ?? ROUTER_DEFAULTS.nu, o.primitives)],
  ["affinity", () => affinityScorer],
  [
    "mabp",
    (o) => {
      if (o.primitives === undefined) {
        throw invalid("routing.primitives", undefined, "primitives w, p, P (policy mabp reads them)", {
          code: "INVALID_CONFIG",
        });
      }
      return mabpScorer(o.nu ?? ROUTER_DEFAULTS.nu, o.primitives);
    },
  ],
]);

/** Built-in policy names, in the order the evaluation lists them. */
export const ROUTING_POLICIES: readonly RoutingPolicyName[] = [
  "random",
  "shortest-path",
  "jsq",
  "bp",
  "cost-bp",
  "affinity",
  "mabp",
];

/**
 * Add a routing policy under `name` (replacing one of the same name).
 *
 * @example
 * registerRoutingPolicy("least-utilised", () => ({ score: (_t, c) => -c.backlog / c.view.capacity }));
 * const router = createRouter("least-utilised");
 */
export function registerRoutingPolicy(name: string, factory: ScorerFactory): void {
  registry.set(name, factory);
}

/**
 * A router for policy `name`.
 *
 * @example
 * const router = createRouter("mabp", { primitives: table, nu: 5, reservationTtl: 250 });
 * const peers = router.route({ commodity: commodity("rag", 0, "c17"), signature }, views, 2, { now });
 */
export function createRouter(name: RoutingPolicyName | (string & {}), options: RouterOptions = {}): Router {
  const factory = registry.get(name);
  if (factory === undefined) {
    throw invalid("routing.policy", name, `a registered policy (one of ${[...registry.keys()].join(", ")})`, {
      code: "INVALID_CONFIG",
    });
  }
  const nu = checkRange("routing.nu", options.nu ?? ROUTER_DEFAULTS.nu, ROUTER_RANGES.nu);
  const reservationTtl = checkRange(
    "routing.reservationTtl",
    options.reservationTtl ?? ROUTER_DEFAULTS.reservationTtl,
    ROUTER_RANGES.reservationTtl,
  );
  return new ScoringRouter(name, factory({ ...options, nu }), { ...options, reservationTtl });
}

class ScoringRouter implements Router {
  private readonly book: ReservationBook;
  private readonly random: () => number;
  // Scratch state reused across candidates and calls: no allocation per candidate.
  private readonly batch: RouteBatch;
  private scores = new Float64Array(64);
  private readonly order: number[] = [];
  private readonly byScore = (a: number, b: number): number => this.scores[b]! - this.scores[a]!;

  constructor(
    readonly name: string,
    private readonly scorer: Scorer,
    options: RouterOptions,
  ) {
    this.book = new ReservationBook(options.reservationTtl ?? ROUTER_DEFAULTS.reservationTtl);
    this.random = options.random ?? createRng(0x5eed);
    this.batch = new RouteBatch(this.book.keys);
  }

  route(task: RouteTask, candidates: readonly PeerView[], k: number, ctx: RouteContext): PeerId[] {
    if (ctx.speculative === true) checkContext(ctx);
    if (!(k >= 1) || candidates.length === 0) return [];
    if (this.scores.length < candidates.length) {
      this.scores = new Float64Array(Math.max(candidates.length, this.scores.length * 2));
    }
    this.batch.reset(candidates.length);
    // 1–2. feasibility (with this router's live reservations on each candidate) and scores
    if (this.scorer.scoreAll === undefined) this.scoreEach(task, candidates, ctx);
    else this.scoreBatch(task, candidates, ctx);
    // 3. the best (k = 1) or the top k; ties broken at random
    const scores = this.scores;
    const index = this.batch.index;
    const n = this.batch.size;
    let chosen: PeerId[];
    if (k === 1) {
      let best = -1;
      let bestScore = -Infinity;
      let ties = 0;
      for (let j = 0; j < n; j++) {
        const s = scores[j]!;
        if (Number.isNaN(s)) continue;
        if (s > bestScore) {
          best = j;
          bestScore = s;
          ties = 1;
        } else if (s === bestScore && this.random() * ++ties < 1) {
          best = j; // reservoir: each tied candidate kept with probability 1/ties
        }
      }
      chosen = best < 0 ? [] : [candidates[index[best]!]!.id];
    } else {
      const order = this.order;
      order.length = 0;
      for (let j = 0; j < n; j++) if (!Number.isNaN(scores[j]!)) order.push(j);
      // Random tie keys first, then a stable sort by score: ties come out in random order.
      shuffle(order, this.random);
      order.sort(this.byScore);
      const m = Math.min(k, order.length);
      chosen = new Array<PeerId>(m);
      for (let r = 0; r < m; r++) chosen[r] = candidates[index[order[r]!]!]!.id;
    }
    for (let r = 0; r < chosen.length; r++) this.book.book(chosen[r]!, task.commodity.queueKey, ctx.now);
    return chosen;
  }

  /** One pass, one `score` call per feasible candidate. */
  private scoreEach(task: RouteTask, candidates: readonly PeerView[], ctx: RouteContext): void {
    const { batch, book, scorer, scores } = this;
    const costOf = ctx.costOf;
    for (let i = 0; i < candidates.length; i++) {
      const view = candidates[i]!;
      const slot = book.live(view.id, ctx.now);
      if (!isFeasible(view, slot === undefined ? 0 : slot.total, ctx)) continue;
      const c = batch.one(view, slot, costOf === undefined ? 0 : costOf(view.id));
      scores[batch.size] = scorer.score(task, c, ctx);
      batch.pushIndex(i);
    }
  }

  /** The feasible candidates into the batch, then one `scoreAll` call. */
  private scoreBatch(task: RouteTask, candidates: readonly PeerView[], ctx: RouteContext): void {
    const { batch, book } = this;
    const costOf = ctx.costOf;
    for (let i = 0; i < candidates.length; i++) {
      const view = candidates[i]!;
      const slot = book.live(view.id, ctx.now);
      if (!isFeasible(view, slot === undefined ? 0 : slot.total, ctx)) continue;
      batch.push(i, view, slot, costOf === undefined ? 0 : costOf(view.id));
    }
    this.scorer.scoreAll!(task, batch, ctx, this.scores);
  }

  settle(peer: PeerId, stateAt: number): void {
    this.book.settle(peer, stateAt);
  }

  reserved(peer: PeerId, now: number): number {
    return this.book.total(peer, now);
  }
}

function shuffle(a: number[], random: () => number): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
}
