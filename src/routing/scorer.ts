/**
 * The extension point of routing: a policy is a scorer — higher is better — over feasible candidates.
 * Feasibility, reservations and top-k selection are shared (router.ts), so every policy obeys the same
 * constraints and only the ranking differs, as in the paper's evaluation.
 */
import type { PeerView, RouteContext, RouteTask } from "./types.js";

/** A candidate as the scorer sees it: the advertised view plus this router's reservations. */
export interface Candidate {
  readonly view: PeerView;
  /** Queue depth of `key` at the candidate, advertised plus reserved. */
  readonly queue: (key: string) => number;
  /** Backlog at the candidate, advertised plus reserved. */
  readonly backlog: number;
  /** Per-unit transfer penalty `d_ij` to the candidate (ctx.costOf, default 0). */
  readonly transferPenalty: number;
}

/**
 * @example
 * // least-loaded-per-capacity, as a custom policy
 * registerRoutingPolicy("least-utilised", () => ({
 *   score: (_task, c) => -c.backlog / c.view.capacity,
 * }));
 */
export interface Scorer {
  score(task: RouteTask, candidate: Candidate, ctx: RouteContext): number;
}
