/**
 * What the verdict and the HTML charts read of a report.json: the fields every report has, and
 * optional ones a report may carry (newer fields, or a report.json written before a field existed).
 * A reader never assumes an optional field; it says less when one is missing.
 */
import type { FailureCodes } from "./failure-codes.js";
import type { NetValueSummary } from "./net-value-intervals.js";
import type { PairedDifference } from "./paired-difference.js";
import type { PolicyStats } from "./policy-stats.js";
import type { PeerSummary, Report } from "./report.js";

/** A rate or mean with its 95% interval (null where the run had too few to give one). */
export interface IntervalValue {
  readonly value: number | null;
  readonly lo95: number | null;
  readonly hi95: number | null;
  /** What the value counts over (fan-outs, branches). */
  readonly n?: number;
}

/** Optional per-policy fields (also per coordinator), read when present. */
export interface OptionalPolicyFields {
  /**
   * Fan-out-level decision relevance: committed fan-outs whose action differs from the local decision
   * without fanning out, over committed fan-outs. The headline figure where present.
   */
  readonly fanout_decision_relevant_commit_rate?: number | null;
  /** Leave-one-out per committed branch (`decision_relevant_commit_rate` in older reports). */
  readonly pivotal_commit_rate?: number | null;
  /** Abandoned speculative fan-outs whose cut-off answers, together with those used, would have flipped the action. */
  readonly would_flip_share_of_abandoned?: number | null;
  /** Deadline misses counted by the mode the fan-out ran in. */
  readonly deadline_misses_by_mode?: Readonly<Record<string, number>>;
  /** Reports written before the leave-one-out figures were named pivotal. */
  readonly decision_relevant_commit_rate?: number | null;
  readonly high_value_share_of_lost?: number | null;
}

export type StatsView = PolicyStats & OptionalPolicyFields;

/** The founding note's observation, per policy and coordinator, with intervals. */
export interface SeedObservation {
  readonly speculative_fanout_commit_rate?: IntervalValue;
  readonly decision_relevant_share_of_committed?: IntervalValue;
  readonly would_flip_share_of_abandoned?: IntervalValue;
}

export interface EstimateView {
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly observed_share?: number | null;
  /** Share of the coordinator's decisions whose p50 / p99 was a lower bound (censored beyond the horizon). */
  readonly p50_lower_bound_share?: number | null;
  readonly p99_lower_bound_share?: number | null;
}

export interface RuleVsNaiveView {
  readonly pairs: number;
  readonly commits_per_fanout: PairedDifference | null;
  readonly abandon_cost_ms_per_fanout: PairedDifference | null;
  readonly net_value_per_fanout: PairedDifference | null;
  /** The rule minus naive-p50 in fan-out-level decision relevance, with its interval. */
  readonly fanout_decision_relevant_commit_rate?: PairedDifference | null;
}

export interface ReportView {
  readonly scenario: string;
  readonly seed: number;
  readonly duration_s: number;
  readonly interrupted: boolean;
  readonly measured: Omit<Report["measured"], "coordinator_estimates" | "fanout_p99_interval_ms"> & {
    readonly coordinator_estimates: Readonly<Record<string, EstimateView>>;
    /** Absent in reports written before it was added. */
    readonly fanout_p99_interval_ms?: Report["measured"]["fanout_p99_interval_ms"];
  };
  readonly policies: Readonly<Record<string, StatsView>>;
  readonly by_coordinator: Readonly<Record<string, Readonly<Record<string, StatsView>>>>;
  readonly value_model: Report["value_model"];
  readonly rule_vs_naive: RuleVsNaiveView | null;
  readonly net_value?: NetValueSummary;
  readonly failures?: FailureCodes;
  readonly sensitivity: Report["sensitivity"];
  readonly checks: Report["checks"];
  readonly series: Omit<Report["series"], "peer_summary"> & {
    readonly peer_summary?: Readonly<Record<string, PeerSummary>>;
  };
  readonly seed_observation?: Readonly<Record<string, Readonly<Record<string, SeedObservation>>>>;
}

export const RULE = "p99-boundary";
export const NAIVE = "naive-p50";

/** The scenario's coordinators by budget, smallest first. */
export function coordinatorsByBudget(r: ReportView): string[] {
  return Object.entries(r.series.budgets)
    .sort((a, b) => a[1] - b[1])
    .map(([c]) => c);
}
