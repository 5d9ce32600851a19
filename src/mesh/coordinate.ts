/**
 * The `Coordinate` entry point: "decide this task within my deadline". The mesh decodes and checks
 * the request, turns the caller's gRPC deadline (minus the node's reserve) into a budget and a
 * signal, and hands it to the node's `CoordinateFn` (which runs the engine's Coordinator).
 */
import type { Task } from "../engine/transport.js";
import type { BranchRecord, FanoutOutcome } from "../engine/outcome.js";
import { shownKinds } from "../policy/shown-kinds.js";
import type { EstimateKind } from "../policy/shown-kinds.js";
import type { Context } from "@opentelemetry/api";

export interface CoordinateRequest {
  readonly task: Task;
  /** Answers required: 0 means all selected peers, k > 0 means any k (a quorum). */
  readonly required: number;
  /** Policy or routing name; undefined means the node's default. */
  readonly policy?: string;
  /** Decision model name and its options, interpreted by the node. */
  readonly decision?: string;
  readonly options?: unknown;
  /** Replicated work: any k of these replicas, hedged (src/mesh/coordinate-replicated.ts). */
  readonly replicated?: ReplicatedRequest;
}

/** "Any k of these r replicas" (r > k), under a hedge policy. */
export interface ReplicatedRequest {
  /** Peer ids in preference order: the first k are the primaries, the rest backups. */
  readonly replicas: readonly string[];
  readonly k: number;
  /** A hedge policy name; undefined means the node's `hedge.policy`. */
  readonly hedgePolicy?: string;
}

export interface CoordinateContext {
  /** Aborts when the caller cancels, the deadline passes, or the node is forced to stop. */
  readonly signal: AbortSignal;
  /** Absolute deadline for the fan-out on the server's clock (incoming deadline minus reserve). */
  readonly deadline: number;
  /**
   * `deadline − now` when the call started, ms; 0 when the reply reserve the node wants (its measured
   * decide-and-reply overhead) is the call's whole time left, so no fan-out can run and reply in time.
   */
  readonly budgetMs: number;
  /** Trace context of the caller (W3C), for the node's spans. */
  readonly traceContext: Context;
}

/** What the node answers; `fromFanoutOutcome` builds it from the engine's outcome. */
export interface CoordinateResult {
  readonly action: unknown;
  readonly mode: string;
  readonly reason: string;
  readonly fanoutId: string;
  readonly fanoutP50Ms: number;
  readonly fanoutP99Ms: number;
  readonly committed: number;
  readonly abandoned: number;
  readonly failed: number;
  readonly late: number;
  readonly degraded: boolean;
  readonly decisionChanged: boolean;
  readonly elapsedMs: number;
  /** From the fan-out's start to its mode chosen, ms (FanoutOutcome.decidedMs); absent: `elapsedMs`. */
  readonly decidedMs?: number;
  /** The budget the rule decided with, ms (Classification.budgetMs). */
  readonly budgetMs: number;
  /** The peer work this fan-out's cut branches lost, ms (FanoutOutcome.abandonCostMs). */
  readonly abandonCostMs: number;
  /** The abandon cost the rule decided with, from the deciding policy's own ledger, ms (Classification.abandonCostMs). */
  readonly decidedAbandonCostMs?: number;
  /** Code of a SpeculationBudgetViolation met on the way, or undefined. */
  readonly violation?: string;
  /** How each branch ended (empty or absent on degrade). */
  readonly branches?: readonly CoordinateBranchSummary[];
  /** Bits per committed/partial answer; null or absent when none. */
  readonly infoGainPerCommitted?: number | null;
  readonly deadlineMissed?: boolean;
  /**
   * The fan-out ran but no peer answered by its deadline: the action is the decision model's prior,
   * answered in time (mode and reason stay what the rule decided before it waited).
   */
  readonly noAnswer?: boolean;
  /** Where fanoutP50Ms/fanoutP99Ms came from (FanoutEstimate.basis). */
  readonly estimateBasis?: "observed" | "independent";
  /** What fanoutP50Ms/fanoutP99Ms are: known, only a lower bound, or unknown (no estimate). */
  readonly fanoutP50Kind?: EstimateKind;
  readonly fanoutP99Kind?: EstimateKind;
  /** The estimate's horizon, ms (FanoutEstimate.horizonMs); absent when there is none (nothing censored beyond the completions). */
  readonly fanoutHorizonMs?: number;
  /** A replicated request: the backups sent and those refused for good. */
  readonly backups?: readonly CoordinateBackupSummary[];
  readonly refused?: readonly CoordinateRefusalSummary[];
}

export interface CoordinateBackupSummary {
  readonly peer: string;
  readonly backs: string;
  readonly sentAtMs: number;
  readonly reason: string;
  readonly landable: boolean;
  readonly won: boolean;
}

export interface CoordinateRefusalSummary {
  readonly backs: string;
  readonly backup: string;
  readonly atMs: number;
  readonly reason: string;
  readonly remainingMs: number;
  /** Undefined when the backup's estimate was not fresh. */
  readonly backupP99Ms?: number;
  readonly costMs: number;
}

/** One branch of the fan-out as the coordinator recorded it when it decided. */
export interface CoordinateBranchSummary {
  readonly peer: string;
  readonly outcome: string;
  readonly decisionRelevant: boolean;
  readonly latencyMs: number;
  readonly lostWorkMs: number;
  readonly unsettled: boolean;
}

/**
 * Runs one coordination. Throw a `TailswarmError` to answer with a status (its code picks it:
 * DEADLINE_EXCEEDED, INVALID_ARGUMENT, UNKNOWN_TASK_KIND → NOT_FOUND, SPECULATION_BUDGET_VIOLATION →
 * FAILED_PRECONDITION, …).
 *
 * @example
 * const coordinate: CoordinateFn = async (req, ctx) =>
 *   fromFanoutOutcome(await coordinator.fanOut(req.task, { deadline: ctx.deadline, signal: ctx.signal }));
 */
export type CoordinateFn = (req: CoordinateRequest, ctx: CoordinateContext) => Promise<CoordinateResult>;

/** The reply fields of a fan-out outcome. */
export function fromFanoutOutcome(outcome: FanoutOutcome): CoordinateResult {
  const kinds = shownKinds(outcome.classification, outcome.estimate);
  return {
    action: outcome.action,
    mode: outcome.classification.mode,
    reason: outcome.classification.reason,
    fanoutId: outcome.fanoutId,
    fanoutP50Ms: outcome.classification.fanoutP50Ms,
    fanoutP99Ms: outcome.estimate.p99Ms,
    ...branchCounts(outcome.branches),
    degraded: outcome.degraded,
    decisionChanged: outcome.decisionChanged,
    elapsedMs: outcome.elapsedMs,
    ...(outcome.decidedMs !== undefined && { decidedMs: outcome.decidedMs }),
    budgetMs: outcome.classification.budgetMs,
    abandonCostMs: outcome.abandonCostMs,
    decidedAbandonCostMs: outcome.classification.abandonCostMs,
    ...(outcome.violation ? { violation: outcome.violation.code } : {}),
    branches: outcome.branches.map(branchSummary),
    infoGainPerCommitted: outcome.infoGainPerCommitted,
    deadlineMissed: outcome.deadlineMissed,
    estimateBasis: outcome.estimate.basis ?? "independent",
    fanoutP50Kind: kinds.p50,
    fanoutP99Kind: kinds.p99,
    ...horizonOf(outcome.estimate.horizonMs),
  };
}

/** The horizon as the reply carries it: only a finite one (none beyond the completions is no horizon). */
function horizonOf(horizonMs: number | undefined): Pick<CoordinateResult, "fanoutHorizonMs"> {
  return horizonMs !== undefined && Number.isFinite(horizonMs) ? { fanoutHorizonMs: horizonMs } : {};
}

/** How many branches ended each way (committed counts partial answers too). */
export function branchCounts(
  branches: readonly BranchRecord[],
): Pick<CoordinateResult, "committed" | "abandoned" | "failed" | "late"> {
  let committed = 0;
  let abandoned = 0;
  let failed = 0;
  let late = 0;
  for (const b of branches) {
    if (b.outcome === "committed" || b.outcome === "partial") committed++;
    else if (b.outcome === "abandoned") abandoned++;
    else if (b.outcome === "late") late++;
    else failed++;
  }
  return { committed, abandoned, failed, late };
}

export function branchSummary(b: BranchRecord): CoordinateBranchSummary {
  return {
    peer: b.peer,
    outcome: b.outcome,
    decisionRelevant: b.decisionRelevant,
    latencyMs: b.latencyMs,
    lostWorkMs: b.lostWorkMs,
    unsettled: b.unsettled === true,
  };
}
