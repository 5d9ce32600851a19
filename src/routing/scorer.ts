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
 * The feasible candidates of one route call, as the router prepared them. Read-only and valid only during
 * the `scoreAll` call it is given to (the router reuses it).
 */
export interface CandidateBatch {
  readonly size: number;
  /** The `i`-th candidate (one reused object: read it before asking for the next). */
  at(i: number): Candidate;
  view(i: number): PeerView;
  /**
   * Queue depth of `key` at candidate `i`, advertised plus reserved. Pass `keyId(key)`, resolved once per
   * call, to skip resolving it per candidate.
   */
  queue(i: number, key: string, keyId?: number): number;
  /** The router's number for `key` (-1 when it has none), for `queue`. */
  keyId(key: string): number;
  /** Per-unit transfer penalty `d_ij` to candidate `i`. */
  transferPenalty(i: number): number;
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
  /**
   * Optional batch form: `out[i]` = what `score` would return for `batch.at(i)`, for every candidate.
   * The router prefers it: scores land in a Float64Array instead of being returned one call at a time
   * (a fractional score returned from a call that is not inlined is a heap-allocated number — one per
   * candidate per route). Must agree with `score` exactly.
   */
  scoreAll?(task: RouteTask, batch: CandidateBatch, ctx: RouteContext, out: Float64Array): void;
}
