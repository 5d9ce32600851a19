/**
 * The router: feasibility (admission limit, speculation rule), reservations and top-k selection around a
 * policy's Scorer. Policies register by name, like grpc-js load-balancer types.
 */
import { TailswarmError } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { createRng } from "../util/rng.js";
import { checkContext, isFeasible } from "./feasibility.js";
import { affinityScorer } from "./policies/affinity.js";
import { bpScorer, costBpScorer, jsqScorer, randomScorer, shortestPathScorer } from "./policies/baselines.js";
import { mabpScorer } from "./policies/mabp.js";
import type { Primitives } from "./primitives.js";
import { ReservationBook } from "./reservations.js";
import type { Candidate, Scorer } from "./scorer.js";
import type { PeerView, RouteContext, RouteTask, Router, RoutingPolicyName } from "./types.js";

export interface RouterOptions {
  /** Primitives `w, p, P` (required by `mabp`; `cost-bp` uses their no-reuse penalty as reference cost). */
  readonly primitives?: Primitives;
  /** Penalty weight ν of the drift-plus-penalty trade-off. Default 5 (the paper's default). */
  readonly nu?: number;
  /** Reservation lifetime, in the unit of `ctx.now`. Default 1000 (ms); 0 turns reservations off. */
  readonly reservationTtl?: number;
  /** Uniform [0,1) source for tie-breaking. Default: a seeded mulberry32 (deterministic). */
  readonly random?: () => number;
}

export type ScorerFactory = (options: RouterOptions) => Scorer;

const registry = new Map<string, ScorerFactory>([
  ["random", () => randomScorer],
  ["shortest-path", () => shortestPathScorer],
  ["jsq", () => jsqScorer],
  ["bp", () => bpScorer],
  ["cost-bp", (o) => costBpScorer(o.nu ?? 5, o.primitives)],
  ["affinity", () => affinityScorer],
  [
    "mabp",
    (o) => {
      if (o.primitives === undefined) {
        throw new TailswarmError(
          "INVALID_CONFIG",
          "routing policy 'mabp' needs options.primitives (w, p, P)",
        );
      }
      return mabpScorer(o.nu ?? 5, o.primitives);
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
    throw new TailswarmError(
      "INVALID_CONFIG",
      `routing policy '${name}' is not registered; expected one of ${[...registry.keys()].join(", ")}`,
    );
  }
  const nu = options.nu ?? 5;
  if (!(nu >= 0) || !Number.isFinite(nu)) {
    throw new TailswarmError("INVALID_CONFIG", `routing nu is ${nu}; expected a finite number >= 0`);
  }
  return new ScoringRouter(name, factory({ ...options, nu }), options);
}

class ScoringRouter implements Router {
  private readonly book: ReservationBook | undefined;
  private readonly random: () => number;
  // Scratch state reused across candidates and calls: no allocation per candidate.
  private readonly scores: number[] = [];
  private readonly order: number[] = [];
  private readonly candidate: MutableCandidate;

  constructor(
    readonly name: string,
    private readonly scorer: Scorer,
    options: RouterOptions,
  ) {
    const ttl = options.reservationTtl ?? 1000;
    this.book = ttl > 0 ? new ReservationBook(ttl) : undefined;
    this.random = options.random ?? createRng(0x5eed);
    this.candidate = new MutableCandidate(this.book);
  }

  route(task: RouteTask, candidates: readonly PeerView[], k: number, ctx: RouteContext): PeerId[] {
    checkContext(ctx);
    if (!(k >= 1) || candidates.length === 0) return [];
    const c = this.candidate;
    c.now = ctx.now;
    const scores = this.scores;
    const order = this.order;
    order.length = 0;
    let best = -1;
    let bestScore = -Infinity;
    let ties = 0;
    for (let i = 0; i < candidates.length; i++) {
      const view = candidates[i]!;
      c.set(view, ctx.costOf === undefined ? 0 : ctx.costOf(view.id));
      if (!isFeasible(view, c.reservedTotal, ctx)) continue;
      const s = this.scorer.score(task, c, ctx);
      if (Number.isNaN(s)) continue;
      if (k === 1) {
        if (s > bestScore) {
          best = i;
          bestScore = s;
          ties = 1;
        } else if (s === bestScore && this.random() * ++ties < 1) {
          best = i; // reservoir: each tied candidate kept with probability 1/ties
        }
      } else {
        scores[i] = s;
        order.push(i);
      }
    }
    let chosen: PeerId[];
    if (k === 1) {
      chosen = best < 0 ? [] : [candidates[best]!.id];
    } else {
      // Random tie keys first, then a stable sort by score: ties come out in random order.
      shuffle(order, this.random);
      order.sort((a, b) => scores[b]! - scores[a]!);
      chosen = order.slice(0, k).map((i) => candidates[i]!.id);
    }
    if (this.book !== undefined)
      for (const id of chosen) this.book.book(id, task.commodity.queueKey, ctx.now);
    return chosen;
  }

  settle(peer: PeerId, stateAt: number): void {
    this.book?.settle(peer, stateAt);
  }

  reserved(peer: PeerId, now: number): number {
    return this.book?.total(peer, now) ?? 0;
  }
}

/** The one Candidate object a router reuses for every candidate it scores. */
class MutableCandidate implements Candidate {
  view!: PeerView;
  backlog = 0;
  transferPenalty = 0;
  reservedTotal = 0;
  now = 0;

  constructor(private readonly book: ReservationBook | undefined) {}

  set(view: PeerView, transferPenalty: number): void {
    this.view = view;
    this.transferPenalty = transferPenalty;
    this.reservedTotal = this.book === undefined ? 0 : this.book.total(view.id, this.now);
    this.backlog = view.backlog + this.reservedTotal;
  }

  readonly queue = (key: string): number => {
    const advertised = this.view.queues[key] ?? 0;
    return this.reservedTotal === 0 ? advertised : advertised + this.book!.queue(this.view.id, key, this.now);
  };
}

function shuffle(a: number[], random: () => number): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
}
