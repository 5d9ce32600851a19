/**
 * The engine's routing contract (step 3 of a fan-out: which `k` of the candidate peers get a branch).
 * Distinct from src/routing's `Router`, a scoring policy over advertised peer state: `RouteAdapter`
 * puts one of those behind this contract.
 */
import type { LatencySource } from "../estimate/latency-source.js";
import type { PeerId, Requirement } from "../estimate/types.js";

/** What a fan-out router sees besides the candidates. */
export interface FanoutRouteContext {
  readonly now: number;
  readonly budgetMs: number;
  readonly task: { readonly kind: string };
  /** Per-peer estimates, for routers that weigh latency. */
  readonly estimates: Pick<LatencySource, "estimate">;
  /** Which of the chosen peers must answer (a quorum lets one slow peer ride along a speculation). */
  readonly requirement?: Requirement;
}

/** A router's choice, with its judgement of speculation (an input of `decide`). */
export interface RouteChoice {
  readonly peers: readonly PeerId[];
  /**
   * Every chosen peer may take a speculative branch (its fresh p99 is within the budget). False: the
   * fan-out does not speculate (reason `speculation-infeasible-peer`).
   */
  readonly speculationFeasible: boolean;
}

/**
 * Chooses `k` peers out of `candidates` (already filtered of peers whose fresh p99 exceeds the budget
 * when enough others remain): `k` distinct peers taken from `candidates`, as a list (no judgement of
 * speculation) or as a `RouteChoice`.
 *
 * @example
 * // join-the-shortest-queue over a caller-kept in-flight count
 * const jsq: FanoutRouter = (candidates, k) =>
 *   [...candidates].sort((a, b) => (inflight.get(a) ?? 0) - (inflight.get(b) ?? 0)).slice(0, k);
 */
export type FanoutRouter = (
  candidates: readonly PeerId[],
  k: number,
  ctx: FanoutRouteContext,
) => readonly PeerId[] | RouteChoice;
