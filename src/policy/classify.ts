/**
 * The rule, exactly as the source idea's reference code states it: speculate, issue synchronously, or
 * degrade — a pure function of the remaining budget, the fan-out p50/p99 of the required peers, the
 * expected abandon cost and whether the answers can still change the action. `decide` (decide.ts)
 * applies it to a fan-out, with every other fact that can change the mode.
 *
 * Branch cost is a tail statistic; branch value is a median statistic.
 */
import { invalid } from "../errors.js";
import { REASONS } from "./reasons.js";
import type { Classification, Reason } from "./types.js";
import { SpeculationBudgetViolation } from "./violation.js";

/**
 * Decide the mode of one fan-out exactly as the reference code does, strict inequalities included:
 *
 * | condition (checked in this order)          | result                                             |
 * |--------------------------------------------|----------------------------------------------------|
 * | `budget <= 0`                              | throws `SpeculationBudgetViolation` (non-positive-budget) |
 * | `p99 < p50`                                | throws `SpeculationBudgetViolation` (p99-below-p50) |
 * | not relevant, `budget > p50`               | synchronous, `not-decision-relevant`               |
 * | not relevant, `budget <= p50`              | degrade, `budget-at-or-below-p50`                  |
 * | `budget > p99 + abandonCost`               | speculate, `budget-exceeds-p99-plus-abandon-cost`  |
 * | `budget > p50`                             | synchronous, `budget-between-p50-and-p99-plus-abandon-cost` |
 * | otherwise                                  | degrade, `budget-at-or-below-p50`                  |
 *
 * Inputs that are not finite numbers, and negative latencies or abandon costs, throw
 * `TailswarmError("INVALID_ARGUMENT")` naming the field (a negative budget is a violation, not a bad
 * argument: deadlines pass).
 *
 * @example
 * classify(90, 22, 340, 0, true).mode;  // "synchronous": 22 < 90 <= 340 + 0
 * classify(400, 22, 340, 20, true).mode; // "speculate":   400 > 340 + 20
 * classify(20, 22, 340, 0, true).mode;  // "degrade":     20 <= 22
 */
export function classify(
  budgetMs: number,
  fanoutP50Ms: number,
  fanoutP99Ms: number,
  abandonCostMs: number,
  relevant: boolean,
): Classification {
  requireFinite("budgetMs", budgetMs);
  requireLatency("fanoutP50Ms", fanoutP50Ms);
  requireLatency("fanoutP99Ms", fanoutP99Ms);
  requireLatency("abandonCostMs", abandonCostMs);
  requireBoolean("relevant", relevant);

  if (budgetMs <= 0) throw SpeculationBudgetViolation.nonPositiveBudget(budgetMs, fanoutP50Ms, fanoutP99Ms);
  if (fanoutP99Ms < fanoutP50Ms) {
    throw SpeculationBudgetViolation.p99BelowP50(budgetMs, fanoutP50Ms, fanoutP99Ms);
  }
  const reason = ruleReason(budgetMs, fanoutP50Ms, fanoutP99Ms, abandonCostMs, relevant);
  return {
    mode: REASONS[reason].mode,
    reason,
    budgetMs,
    fanoutP50Ms,
    fanoutP99Ms,
    abandonCostMs,
    relevant,
  };
}

/**
 * The rule's reason for validated numbers past the violations (`budget > 0`, `p99 >= p50`): the one
 * statement of its inequalities, shared by `classify` and `decide`.
 */
export function ruleReason(b: number, p50: number, p99: number, cost: number, relevant: boolean): Reason {
  if (!relevant) return b > p50 ? "not-decision-relevant" : "budget-at-or-below-p50";
  if (b > p99 + cost) return "budget-exceeds-p99-plus-abandon-cost";
  if (b > p50) return "budget-between-p50-and-p99-plus-abandon-cost";
  return "budget-at-or-below-p50";
}

/** Throws INVALID_ARGUMENT unless `value` is a finite number. */
export function requireFinite(field: string, value: number): void {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw invalid(field, value, "a finite number of milliseconds");
  }
}

/** Throws INVALID_ARGUMENT unless `value` is a finite number >= 0. */
export function requireLatency(field: string, value: number): void {
  requireFinite(field, value);
  if (value < 0) throw invalid(field, value, "a number of milliseconds >= 0");
}

/** Throws INVALID_ARGUMENT unless `value` is a boolean. */
export function requireBoolean(field: string, value: boolean): void {
  if (typeof value !== "boolean") throw invalid(field, value, "a boolean");
}

/**
 * An unknown estimate may carry NaN for a quantile it never saw, or +Infinity for an unbounded tail;
 * anything else must be a latency.
 */
export function requireKnownOrMissing(field: string, value: number): void {
  if (Number.isNaN(value) || value === Infinity) return;
  requireLatency(field, value);
}
