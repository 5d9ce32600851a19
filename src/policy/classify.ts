/**
 * The one rule of seed 000: speculate, issue synchronously, or degrade — a pure function of the
 * remaining budget, the fan-out p50/p99 of the required peers, the expected abandon cost and whether
 * the answers can still change the action.
 *
 * Branch cost is a tail statistic; branch value is a median statistic.
 */
import { TailswarmError } from "../errors.js";
import type { FanoutEstimate } from "../estimate/types.js";
import type { Classification, Mode, Reason } from "./types.js";
import { SpeculationBudgetViolation } from "./violation.js";

/**
 * Decide the mode of one fan-out exactly as the seed's reference code does, strict inequalities
 * included:
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
  const b = budgetMs;
  const p50 = fanoutP50Ms;
  const p99 = fanoutP99Ms;
  const cost = abandonCostMs;
  if (!relevant) {
    return b > p50
      ? result("synchronous", "not-decision-relevant", b, p50, p99, cost, relevant)
      : result("degrade", "budget-at-or-below-p50", b, p50, p99, cost, relevant);
  }
  if (b > p99 + cost)
    return result("speculate", "budget-exceeds-p99-plus-abandon-cost", b, p50, p99, cost, relevant);
  if (b > p50)
    return result("synchronous", "budget-between-p50-and-p99-plus-abandon-cost", b, p50, p99, cost, relevant);
  return result("degrade", "budget-at-or-below-p50", b, p50, p99, cost, relevant);
}

/** One allocation per decision: the classification record. */
function result(
  mode: Mode,
  reason: Reason,
  budgetMs: number,
  fanoutP50Ms: number,
  fanoutP99Ms: number,
  abandonCostMs: number,
  relevant: boolean,
): Classification {
  return { mode, reason, budgetMs, fanoutP50Ms, fanoutP99Ms, abandonCostMs, relevant };
}

/**
 * `classify` over a fan-out estimate. A fresh estimate goes straight to `classify`. An unknown one
 * (stale, under-sampled, a peer never seen) never speculates:
 * - `budget <= 0` is still a violation, and so is `p99 < p50` when both are known numbers;
 * - when a p50 is known and `budget <= p50`, degrade (`budget-at-or-below-p50`) — even a median
 *   round trip does not fit;
 * - otherwise synchronous with reason `estimate-unknown` (whatever `relevant` says: the mode is the
 *   same, and the missing estimate is what an operator needs to see).
 *
 * @example
 * classifyEstimate(300, { ...estimate, status: "unknown", p50Ms: NaN, p99Ms: NaN }, 5, true);
 * // { mode: "synchronous", reason: "estimate-unknown", ... }
 */
export function classifyEstimate(
  budgetMs: number,
  estimate: FanoutEstimate,
  abandonCostMs: number,
  relevant: boolean,
): Classification {
  if (estimate.status === "fresh") {
    return classify(budgetMs, estimate.p50Ms, estimate.p99Ms, abandonCostMs, relevant);
  }
  requireFinite("budgetMs", budgetMs);
  requireLatency("abandonCostMs", abandonCostMs);
  requireBoolean("relevant", relevant);
  const p50 = knownLatency("estimate.p50Ms", estimate.p50Ms);
  const p99 = knownLatency("estimate.p99Ms", estimate.p99Ms);
  if (budgetMs <= 0) throw SpeculationBudgetViolation.nonPositiveBudget(budgetMs, p50, p99);
  if (p99 < p50) throw SpeculationBudgetViolation.p99BelowP50(budgetMs, p50, p99);
  const base = { budgetMs, fanoutP50Ms: p50, fanoutP99Ms: p99, abandonCostMs, relevant };
  if (budgetMs <= p50) return { mode: "degrade", reason: "budget-at-or-below-p50", ...base };
  return { mode: "synchronous", reason: "estimate-unknown", ...base };
}

/** Throws INVALID_ARGUMENT unless `value` is a finite number. */
export function requireFinite(field: string, value: number): void {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `${field} must be a finite number of milliseconds, got ${describe(value)}`,
    );
  }
}

/** Throws INVALID_ARGUMENT unless `value` is a finite number >= 0. */
export function requireLatency(field: string, value: number): void {
  requireFinite(field, value);
  if (value < 0) {
    throw new TailswarmError("INVALID_ARGUMENT", `${field} must be >= 0 ms, got ${value}`);
  }
}

function requireBoolean(field: string, value: boolean): void {
  if (typeof value !== "boolean") {
    throw new TailswarmError("INVALID_ARGUMENT", `${field} must be a boolean, got ${describe(value)}`);
  }
}

/**
 * An unknown estimate may carry NaN for a quantile it never saw, or +Infinity for an unbounded tail;
 * anything else must be a latency.
 */
function knownLatency(field: string, value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  requireLatency(field, value);
  return value;
}

function describe(value: unknown): string {
  return typeof value === "number" ? String(value) : `${typeof value} ${JSON.stringify(value) ?? ""}`.trim();
}
