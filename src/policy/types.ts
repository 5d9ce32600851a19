/** Contract of src/policy — the one rule of seed 000, pure and I/O-free. */

export type Mode = "speculate" | "synchronous" | "degrade";

/** Machine-readable reasons, stable strings (they appear in traces, metrics and `tailswarm explain`). */
export type Reason =
  | "budget-exceeds-p99-plus-abandon-cost" // speculate
  | "budget-between-p50-and-p99-plus-abandon-cost" // synchronous
  | "not-decision-relevant" // synchronous (budget above p50)
  | "estimate-unknown" // synchronous (never speculate on an unknown estimate)
  | "budget-at-or-below-p50" // degrade
  | "policy-never" // degrade (baseline policy that never fans out)
  | "policy-always-sync" // synchronous (baseline)
  | "naive-budget-exceeds-p50"; // speculate (the seed's failure, kept as a baseline)

export interface Classification {
  readonly mode: Mode;
  readonly reason: Reason;
  readonly budgetMs: number;
  readonly fanoutP50Ms: number;
  readonly fanoutP99Ms: number;
  readonly abandonCostMs: number;
  readonly relevant: boolean;
}

/** Names of the speculation policies compared in the testbed. `p99-boundary` is the rule. */
export type PolicyName = "p99-boundary" | "naive-p50" | "always-sync" | "never";
