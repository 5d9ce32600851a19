/** What the load generator records: one row per Coordinate call, one per direct measurement fan-out. */
import type { PolicyName } from "../policy/types.js";

export interface BranchRow {
  readonly peer: string;
  /** committed | partial | abandoned | late | failed */
  readonly outcome: string;
  /** Pivotal (leave-one-out: removing this answer changes the action), as the coordinator scored it. */
  readonly pivotal: boolean;
  readonly latencyMs: number;
  readonly lostWorkMs: number;
  /** The peer had not reported its lost work when the coordinator replied. */
  readonly unsettled: boolean;
}

export interface CallRecord {
  /** The request's time, ms since the measured run started. */
  readonly t: number;
  /**
   * How long after the request's time this policy's copy was sent (the policies are staggered;
   * the peers read their latency model this much earlier, so every copy meets the same moment).
   */
  readonly delayMs?: number;
  readonly coordinator: string;
  readonly budgetMs: number;
  readonly policy: PolicyName;
  /** Index of the request in its coordinator's stream (the same for every policy). */
  readonly request: number;
  readonly truth: string;
  /** A gateway episode (the event) was in progress when the request was sent. */
  readonly event: boolean;
  readonly ok: boolean;
  /** gRPC status name when the call failed. */
  readonly code?: string;
  readonly message?: string;
  /** Round trip seen by the caller, ms. */
  readonly rttMs: number;
  readonly action?: string;
  readonly mode?: string;
  readonly reason?: string;
  /** The coordinator's fan-out time (start to decision), ms. */
  readonly elapsedMs?: number;
  /** The budget the coordinator's rule decided with (its reply reserve already taken), ms. */
  readonly decidedBudgetMs?: number;
  /** The coordinator's own fan-out estimate at decision time. */
  readonly fanoutP50Ms?: number;
  readonly fanoutP99Ms?: number;
  /** The abandon cost the coordinator's rule decided with: the calling policy's own ledger, ms. */
  readonly decidedAbandonCostMs?: number;
  /** Where the coordinator's p50/p99 came from: "observed" or "independent" (absent from older nodes). */
  readonly estimateBasis?: string;
  /** What fanoutP50Ms / fanoutP99Ms were: "known", "lower-bound" or "unknown" (absent from older nodes). */
  readonly fanoutP50Kind?: string;
  readonly fanoutP99Kind?: string;
  /**
   * The caller did not have the decision within its budget: the call ended DEADLINE_EXCEEDED, or the
   * reply came after the budget. The caller's view, the same for every policy.
   */
  readonly deadlineMissed: boolean;
  /**
   * The coordinator's fan-out ended after its own deadline (the caller's less the reply reserve):
   * `deadline_missed` in the reply. It ate into the reserve; the caller missed only if the reply then
   * came late too (`deadlineMissed`).
   */
  readonly fanoutOverran?: boolean;
  /** The fan-out ran but no peer answered by its deadline: the action was the prior (`no_answer` in the reply). */
  readonly noAnswer?: boolean;
  readonly infoGainPerCommitted: number | null;
  readonly branches: readonly BranchRow[];
  /** Where the call's time went on the coordinator (its reply's `timing`; absent from older nodes). */
  readonly timing?: CallTiming;
}

/** The coordinator's account of one call, ms (CoordinateTiming in proto/tailswarm/v1/swarm.proto). */
export interface CallTiming {
  /** The caller's time left when the coordinator read the request. */
  readonly arrivalLeftMs: number;
  /** The reserve kept for the reply, and what it wanted (more when capped). */
  readonly reserveMs: number;
  readonly reserveWantedMs: number;
  /**
   * The wanted reserve's measured parts: overhead p99 and event-loop lateness. A node that does not send
   * them reads 0 (the reply is decoded with proto defaults), not absent; only records written before
   * they existed lack them.
   */
  readonly reserveOverheadMs?: number;
  readonly reserveLoopMs?: number;
  readonly queuedMs: number;
  readonly decideMs: number;
  readonly waitMs: number;
  /** From the end of the wait to the reply handed to gRPC. */
  readonly replyMs: number;
}

/** One direct fan-out to every peer (no coordinator, no policy): the swarm's fan-out latency. */
export interface MeasureRecord {
  readonly t: number;
  /** Time until the last peer answered, ms (a lower bound when `censored`). */
  readonly fanoutMs: number;
  readonly censored: boolean;
  readonly peers: readonly { readonly peer: string; readonly latencyMs: number; readonly ok: boolean }[];
}
