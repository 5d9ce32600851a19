/**
 * Names that users see in traces and metrics: span names, span attributes and metric attributes.
 * docs/telemetry.md lists each with its meaning; change a name there and here together.
 */

/** Instrumentation scope of every tracer and meter of the library. */
export const INSTRUMENTATION_SCOPE = "tailswarm";

/** Span names (low cardinality: the fan-out id, peer and mode are attributes). */
export const SPAN_FANOUT = "tailswarm.fanout";
export const SPAN_BRANCH = "tailswarm.branch";

/** Attributes of the fan-out span (and, for mode/reason/policy/outcome/relevance, of metrics). */
export const ATTR = {
  fanoutId: "tailswarm.fanout.id",
  taskKind: "tailswarm.task.kind",
  mode: "tailswarm.mode",
  reason: "tailswarm.reason",
  policy: "tailswarm.policy",
  probeState: "tailswarm.probe.state",
  budgetMs: "tailswarm.budget_ms",
  fanoutP50Ms: "tailswarm.fanout.p50_ms",
  fanoutP99Ms: "tailswarm.fanout.p99_ms",
  fanoutP50Kind: "tailswarm.fanout.p50_kind",
  fanoutP99Kind: "tailswarm.fanout.p99_kind",
  estimateHorizonMs: "tailswarm.estimate.horizon_ms",
  abandonCostMs: "tailswarm.fanout.abandon_cost_ms",
  canFlip: "tailswarm.fanout.can_flip",
  fanoutSize: "tailswarm.fanout.size",
  requirement: "tailswarm.fanout.requirement",
  quorumK: "tailswarm.fanout.quorum_k",
  estimateStatus: "tailswarm.estimate.status",
  estimateAgeMs: "tailswarm.estimate.age_ms",
  estimateMinSamples: "tailswarm.estimate.min_samples",
  estimateBasis: "tailswarm.estimate.basis",
  estimateObservedSamples: "tailswarm.estimate.observed_samples",
  estimateUnknownPeers: "tailswarm.estimate.unknown_peers",
  // set when the fan-out ends
  answered: "tailswarm.answered",
  lostWorkMs: "tailswarm.fanout.lost_work_ms",
  decisionRelevant: "tailswarm.fanout.decision_relevant",
  degraded: "tailswarm.degraded",
  deadlineMissed: "tailswarm.deadline_missed",
  elapsedMs: "tailswarm.elapsed_ms",
  infoGainBits: "tailswarm.information_gain_bits",
  violationCode: "tailswarm.violation.code",
  branchesCommitted: "tailswarm.fanout.branches.committed",
  branchesPartial: "tailswarm.fanout.branches.partial",
  branchesAbandoned: "tailswarm.fanout.branches.abandoned",
  branchesLate: "tailswarm.fanout.branches.late",
  branchesFailed: "tailswarm.fanout.branches.failed",
  // branch span
  peer: "tailswarm.peer",
  branchId: "tailswarm.branch.id",
  hop: "tailswarm.hop",
  branchDeadline: "tailswarm.branch.deadline",
  branchDeadlineInMs: "tailswarm.branch.deadline_in_ms",
  branchOutcome: "tailswarm.branch.outcome",
  branchLatencyMs: "tailswarm.branch.latency_ms",
  branchLostWorkMs: "tailswarm.branch.lost_work_ms",
  branchPivotal: "tailswarm.branch.pivotal",
  // the peer's Branch server span (with branchId, hop, taskKind, branchLostWorkMs)
  branchStatus: "tailswarm.branch.status",
  branchServiceMs: "tailswarm.branch.service_ms",
  branchQueueMs: "tailswarm.branch.queue_ms",
} as const;

/** Event recorded on the fan-out span when a SpeculationBudgetViolation was turned into degrade. */
export const EVENT_VIOLATION = "tailswarm.violation";
