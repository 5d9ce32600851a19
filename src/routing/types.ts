/**
 * Contract of src/routing — peer selection by memory-augmented backpressure (MABP; docs/background.md) and its
 * baselines. Pure: no I/O, no clock of its own (callers pass `now`).
 */
import type { PeerId } from "../estimate/types.js";

/**
 * A commodity `c = (r, k, z)`: request class, service stage and finite state type (prompt cluster,
 * retrieval signature, expert subset, prefix/KV or tool-result signature).
 */
export interface Commodity {
  readonly requestClass: string;
  readonly stage: number;
  readonly stateType: string;
  /**
   * Queue key `r/k` that peers advertise depths for. State types are not queue keys: they enter the
   * score through resident memory signatures, which keeps the advertised state small and bounded.
   */
  readonly queueKey: string;
}

/** Anything with set membership on 32-bit signature hashes: a `Set<number>` or a `SignatureSet`. */
export interface SignatureLookup {
  has(signature: number): boolean;
  readonly size: number;
}

/**
 * What a coordinator knows about one candidate peer (advertised state, piggybacked on replies). A view is
 * immutable once given to a router: a new state is a new view object (routers cache what they read from
 * a view, per object).
 */
export interface PeerView {
  readonly id: PeerId;
  /** Advertised queue depth per queue key (`r/k`): units waiting or in service. Missing keys are 0. */
  readonly queues: Readonly<Record<string, number>>;
  /** Advertised total backlog (sum of `queues`); JSQ ranks on it. */
  readonly backlog: number;
  /** Resident memory: a bounded set of 32-bit object signatures (see `boundedSignatures`). */
  readonly signatures: SignatureLookup;
  /** Memory in use and budget, in the same size unit as retention uses. */
  readonly memoryUsed: number;
  readonly memoryBudget: number;
  /** Work units the peer serves per unit of time (μ). */
  readonly capacity: number;
  /** Admission limit: a peer whose backlog plus reservations reaches it is infeasible. Default Infinity. */
  readonly maxBacklog?: number;
  /** Time the view was advertised; reservations booked before it are covered by it (`Router.settle`). */
  readonly stateAt: number;
}

/** One unit of work to place. `signature` names the memory object it could reuse (none: memory cannot help). */
export interface RouteTask {
  readonly commodity: Commodity;
  readonly signature?: number;
  /**
   * Backpressure of the source `Q_i^c` (units of this queue key waiting where the task is now). Only the
   * routing differential `Q_i^c − Q_j^c` uses it. Default 0.
   */
  readonly pressure?: number;
}

export interface RouteContext {
  /** Current time on the caller's clock (reservations are stamped and expire on it). */
  readonly now: number;
  /** Remaining budget, ms. Required when `speculative`. */
  readonly budgetMs?: number;
  /** A speculative branch: peers whose fresh p99 exceeds `budgetMs` (or is unknown) are infeasible. */
  readonly speculative?: boolean;
  /** Fresh p99 of one peer, ms; `undefined` or NaN when unknown (unknown never speculates). */
  readonly p99Of?: (peer: PeerId) => number | undefined;
  /** Per-unit transfer penalty `d_ij` from the source to `peer` (default 0). */
  readonly costOf?: (peer: PeerId) => number;
}

export type RoutingPolicyName = "random" | "shortest-path" | "jsq" | "bp" | "cost-bp" | "affinity" | "mabp";

/**
 * Chooses peers for a task. Implementations are synchronous and allocation-light: routing one task over
 * 40 candidates costs microseconds.
 *
 * @example
 * const router = createRouter("mabp", { primitives, nu: 5 });
 * const [peer] = router.route({ commodity, signature }, views, 1, { now: clock.now() });
 * // ... when the reply arrives with the peer's piggybacked state:
 * router.settle(peer, reply.stateAt);
 */
export interface Router {
  /** The policy's registered name (`RoutingPolicyName` for the built-ins). */
  readonly name: string;
  /**
   * Up to `k` distinct feasible peers, best first (fewer when fewer are feasible; none is `[]`). Books a
   * reservation on each chosen peer so that concurrent decisions see the backlog after this one.
   */
  route(task: RouteTask, candidates: readonly PeerView[], k: number, ctx: RouteContext): PeerId[];
  /** Fresh state of `peer`, stamped `stateAt`, arrived: drop the reservations it already reflects. */
  settle(peer: PeerId, stateAt: number): void;
  /** Reserved units currently booked on `peer` (all queue keys), at `now`. */
  reserved(peer: PeerId, now: number): number;
}
