import { TailswarmError } from "../errors.js";
import { REASONS } from "./reasons.js";
import type { Classification, Reason } from "./types.js";

/** Which side of the rule was broken: the reason of the degrade it comes with (see `REASONS`). */
export type ViolationKind = Extract<
  Reason,
  "non-positive-budget" | "p99-below-p50" | "budget-at-or-below-p50"
>;

/**
 * Raised when a fan-out cannot be honoured at its budget: the budget is gone (`budgetMs <= 0`), the
 * latency estimate is corrupt or stale (`p99 < p50`), or — thrown by `decide` only when there is no
 * local/cached fallback to degrade to — the rule said degrade (`budget <= p50`).
 *
 * The messages are the founding note's (docs/background.md), with the field names added, so that an operator reading a trace sees
 * the numbers that decided it.
 *
 * @example
 * try {
 *   classify(0, 22, 340, 5, true);
 * } catch (err) {
 *   if (err instanceof SpeculationBudgetViolation && err.kind === "non-positive-budget") degradeLocally();
 * }
 */
export class SpeculationBudgetViolation extends TailswarmError {
  readonly kind: ViolationKind;
  readonly budgetMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;

  constructor(
    kind: ViolationKind,
    budgetMs: number,
    p50Ms: number,
    p99Ms: number,
    options?: { cause?: unknown },
  ) {
    super("SPECULATION_BUDGET_VIOLATION", violationMessage(kind, budgetMs, p50Ms, p99Ms), options);
    this.name = "SpeculationBudgetViolation";
    this.kind = kind;
    this.budgetMs = budgetMs;
    this.p50Ms = p50Ms;
    this.p99Ms = p99Ms;
  }

  /** `budgetMs <= 0`: the coordinator must degrade, not speculate. */
  static nonPositiveBudget(budgetMs: number, p50Ms: number, p99Ms: number): SpeculationBudgetViolation {
    return new SpeculationBudgetViolation("non-positive-budget", budgetMs, p50Ms, p99Ms);
  }

  /** `p99 < p50`: the latency estimate is corrupt or stale. */
  static p99BelowP50(budgetMs: number, p50Ms: number, p99Ms: number): SpeculationBudgetViolation {
    return new SpeculationBudgetViolation("p99-below-p50", budgetMs, p50Ms, p99Ms);
  }

  /** The violation of kind `c.reason`, with `c`'s numbers. */
  static of(c: Classification & { readonly reason: ViolationKind }): SpeculationBudgetViolation {
    return new SpeculationBudgetViolation(c.reason, c.budgetMs, c.fanoutP50Ms, c.fanoutP99Ms);
  }
}

/** True when `reason` is a violation's (met always, or when there is no fallback). */
export function isViolationReason(reason: Reason): reason is ViolationKind {
  return REASONS[reason].violation !== undefined;
}

/**
 * The violation a returned classification met on the way to its degrade (`budget <= 0`, `p99 < p50`),
 * for the engine to count and trace; undefined for every other reason.
 */
export function violationOf(c: Classification): SpeculationBudgetViolation | undefined {
  const reason = c.reason;
  return REASONS[reason].violation === "always" && isViolationReason(reason)
    ? SpeculationBudgetViolation.of({ ...c, reason })
    : undefined;
}

function violationMessage(kind: ViolationKind, budgetMs: number, p50Ms: number, p99Ms: number): string {
  switch (kind) {
    case "non-positive-budget":
      return `negative or zero budget (budgetMs = ${budgetMs} ms, expected > 0); coordinator must degrade, not speculate`;
    case "p99-below-p50":
      return `p99 (${p99Ms} ms) < p50 (${p50Ms} ms); latency estimate is corrupt or stale (expected fanoutP99Ms >= fanoutP50Ms)`;
    case "budget-at-or-below-p50":
      return `budget ${budgetMs} ms <= p50 ${p50Ms} ms; coordinator must fall back to local/cached decision`;
  }
}
