/**
 * The speculation policies the testbed compares, behind one function. `p99-boundary` is the rule;
 * the others are baselines that show what the rule buys.
 */
import type { FanoutEstimate } from "../estimate/types.js";
import { classifyEstimate, requireFinite, requireLatency } from "./classify.js";
import type { Classification, Mode, PolicyName, Reason } from "./types.js";
import { TailswarmError } from "../errors.js";
import { SpeculationBudgetViolation } from "./violation.js";

/** Every policy name, in the order reports list them. */
export const POLICY_NAMES: readonly PolicyName[] = ["p99-boundary", "naive-p50", "always-sync", "never"];

/** True when `value` names a policy (for config and CLI parsing). */
export function isPolicyName(value: unknown): value is PolicyName {
  return typeof value === "string" && (POLICY_NAMES as readonly string[]).includes(value);
}

/**
 * The mode of one fan-out under `policy`:
 * - `p99-boundary` — the rule (`classifyEstimate`): speculate only when `budget > p99 + abandonCost`
 *   and the answers can change the action; unknown estimates never speculate.
 * - `naive-p50` — the seed's failure: speculate whenever `budget > p50` (reason
 *   `naive-budget-exceeds-p50`), ignoring p99, abandon cost, relevance and freshness; degrade at or
 *   below p50; synchronous (`estimate-unknown`) only when it has no p50 number at all.
 * - `always-sync` — synchronous (`policy-always-sync`) whatever the estimate.
 * - `never` — always degrade (`policy-never`): the local/cached decision, no fan-out.
 *
 * Every policy that fans out throws `SpeculationBudgetViolation` (non-positive-budget) when
 * `budget <= 0`; `never` does not fan out and so never throws a violation.
 *
 * @example
 * decideMode("naive-p50", 90, estimate, 0, true).mode;    // "speculate" with p50 22, p99 340
 * decideMode("p99-boundary", 90, estimate, 0, true).mode; // "synchronous"
 */
export function decideMode(
  policy: PolicyName,
  budgetMs: number,
  estimate: FanoutEstimate,
  abandonCostMs: number,
  relevant: boolean,
): Classification {
  switch (policy) {
    case "p99-boundary":
      return classifyEstimate(budgetMs, estimate, abandonCostMs, relevant);
    case "naive-p50": {
      const c = baseline(budgetMs, estimate, abandonCostMs, relevant, true);
      const p50 = estimate.p50Ms;
      if (!Number.isFinite(p50)) return classified(c, "synchronous", "estimate-unknown");
      requireLatency("estimate.p50Ms", p50);
      return budgetMs > p50
        ? classified(c, "speculate", "naive-budget-exceeds-p50")
        : classified(c, "degrade", "budget-at-or-below-p50");
    }
    case "always-sync":
      return classified(
        baseline(budgetMs, estimate, abandonCostMs, relevant, true),
        "synchronous",
        "policy-always-sync",
      );
    case "never":
      return classified(
        baseline(budgetMs, estimate, abandonCostMs, relevant, false),
        "degrade",
        "policy-never",
      );
    default:
      throw new TailswarmError(
        "INVALID_ARGUMENT",
        `policy must be one of ${POLICY_NAMES.join(", ")}, got ${JSON.stringify(policy)}`,
      );
  }
}

/** Validates the inputs every baseline shares; `fansOut` policies also refuse a spent budget. */
function baseline(
  budgetMs: number,
  estimate: FanoutEstimate,
  abandonCostMs: number,
  relevant: boolean,
  fansOut: boolean,
): Omit<Classification, "mode" | "reason"> {
  requireFinite("budgetMs", budgetMs);
  requireLatency("abandonCostMs", abandonCostMs);
  if (fansOut && budgetMs <= 0) {
    throw SpeculationBudgetViolation.nonPositiveBudget(budgetMs, estimate.p50Ms, estimate.p99Ms);
  }
  return {
    budgetMs,
    fanoutP50Ms: estimate.p50Ms,
    fanoutP99Ms: estimate.p99Ms,
    abandonCostMs,
    relevant,
  };
}

function classified(c: Omit<Classification, "mode" | "reason">, mode: Mode, reason: Reason): Classification {
  return { ...c, mode, reason };
}
