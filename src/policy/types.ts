/** Contract of src/policy — the speculation boundary, pure and I/O-free. */
import type { QuantileKind } from "../estimate/types.js";

export type Mode = "speculate" | "synchronous" | "degrade";

/**
 * Why a fan-out got its mode: stable strings (traces, metrics, the flight recorder, `tailswarm explain`).
 * Each one's mode and condition are in `REASONS` (src/policy/reasons.ts), the one table of them.
 */
export type Reason =
  | "budget-exceeds-p99-plus-abandon-cost"
  | "naive-budget-exceeds-p50"
  | "speculation-infeasible-peer"
  | "budget-between-p50-and-p99-plus-abandon-cost"
  | "p99-lower-bound"
  | "p50-lower-bound"
  | "not-decision-relevant"
  | "estimate-unknown"
  | "policy-always-sync"
  | "budget-at-or-below-p50"
  | "non-positive-budget"
  | "p99-below-p50"
  | "policy-never"
  | "no-live-peers";

export interface Classification {
  readonly mode: Mode;
  readonly reason: Reason;
  readonly budgetMs: number;
  /** The fan-out p50/p99 decided on (NaN where the estimate has no number). */
  readonly fanoutP50Ms: number;
  readonly fanoutP99Ms: number;
  /**
   * Whether each was known or only a lower bound (the true quantile is at least the number: it lies in
   * censored mass beyond the last completion); absent means known.
   */
  readonly fanoutP50Kind?: QuantileKind;
  readonly fanoutP99Kind?: QuantileKind;
  /**
   * On `estimate-unknown` under the rule: the estimate's p50 floor, which the budget was above (absent:
   * it had none). A degrade on the floor shows it as its p50 instead.
   */
  readonly p50FloorMs?: number;
  readonly abandonCostMs: number;
  readonly relevant: boolean;
  /** The policy that decided; a coordinator's abandonCostMs comes from this policy's own ledger. */
  readonly policy?: PolicyName;
}

/** Every speculation policy, in the order reports list them. `p99-boundary` is the rule. */
export const POLICY_NAMES = ["p99-boundary", "naive-p50", "always-sync", "never"] as const;

export type PolicyName = (typeof POLICY_NAMES)[number];

/** The policy of a fan-out that names none, in the engine and in a node's config: the rule. */
export const DEFAULT_POLICY: PolicyName = "p99-boundary";

/** True when `value` names a policy (for config and CLI parsing). */
export function isPolicyName(value: unknown): value is PolicyName {
  return typeof value === "string" && (POLICY_NAMES as readonly string[]).includes(value);
}
