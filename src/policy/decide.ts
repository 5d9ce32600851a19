/**
 * `decide`: the one place the mode of a fan-out is decided. It takes every fact that can change the
 * mode and returns the final classification, whose reason's condition (`REASONS`) holds for the
 * numbers returned. The engine, the router adapter and the node act on its answer and never rewrite it.
 */
import { invalid } from "../errors.js";
import type { FanoutEstimate, QuantileKind } from "../estimate/types.js";
import {
  requireBoolean,
  requireFinite,
  requireKnownOrMissing,
  requireLatency,
  ruleReason,
} from "./classify.js";
import { REASONS } from "./reasons.js";
import type { Classification, PolicyName, Reason } from "./types.js";
import { isPolicyName, POLICY_NAMES } from "./types.js";
import { isViolationReason, SpeculationBudgetViolation } from "./violation.js";

export interface DecideInput {
  readonly policy: PolicyName;
  /** Remaining budget of the fan-out, ms (deadline − now − reserve). */
  readonly budgetMs: number;
  /**
   * The fan-out p50/p99 of the required peers and what they rest on: `fresh` numbers, or `unknown`
   * (stale, under-sampled, a peer never seen; a quantile it never saw is NaN) — and whether each quantile
   * is known or only a lower bound (absent: known).
   */
  readonly estimate: Pick<
    FanoutEstimate,
    "status" | "p50Ms" | "p99Ms" | "p50Kind" | "p99Kind" | "p50FloorMs"
  >;
  /** Expected work lost by abandoning the branches, ms. */
  readonly abandonCostMs: number;
  /** The outstanding answers can still change the action. */
  readonly relevant: boolean;
  /**
   * Every chosen peer may take a speculative branch: the router judged its fresh p99 within the budget
   * (true when no router judged it).
   */
  readonly speculationFeasible: boolean;
  /** At least one peer is live to fan out to. */
  readonly anyPeerLive: boolean;
  /** A local/cached decision exists to degrade to (a fallback, or the model's prior). */
  readonly hasFallback: boolean;
}

/**
 * The mode of one fan-out, checked in this order:
 * 1. no live peer — degrade, `no-live-peers`;
 * 2. policy `never` — degrade, `policy-never` (it does not fan out, so no budget violation);
 * 3. `budget <= 0` — degrade, `non-positive-budget` (a violation);
 * 4. the policy's own verdict:
 *    - `p99-boundary` (the rule): on a fresh estimate, `p99 < p50` is a violation (`p99-below-p50`),
 *      otherwise `classify`'s inequalities for known quantiles; a lower bound never speculates — with
 *      the answers decision-relevant, `budget <= p50` degrades (the true p50 is at least that), a
 *      lower-bound p50 below the budget is `p50-lower-bound`, a lower-bound p99 that the budget exceeds
 *      (with the cost) is `p99-lower-bound`, and one it does not is still `budget-between-…`; on an
 *      unknown estimate, never speculate — `p99 < p50` when both are numbers is a violation, a budget
 *      at or below the estimate's p50 floor (`p50FloorMs`, a lower bound at 90% confidence per source)
 *      degrades on that floor, otherwise `estimate-unknown`, which carries the floor it was above;
 *    - `naive-p50` (the failure the rule avoids): speculate whenever `budget > p50`, ignoring p99,
 *      abandon cost, relevance and freshness; degrade at or below p50; `estimate-unknown` with no p50;
 *    - `always-sync`: synchronous;
 * 5. a speculation the router judged infeasible (a chosen peer's fresh p99 exceeds the budget, or is
 *    unknown) — synchronous, `speculation-infeasible-peer`.
 *
 * A degrade needs something to degrade to. Without a fallback, `decide` throws: the
 * `SpeculationBudgetViolation` of the reason (`non-positive-budget`, `p99-below-p50`,
 * `budget-at-or-below-p50`), or INVALID_ARGUMENT for `policy-never` and `no-live-peers`. With one, a
 * violation's degrade is returned and `violationOf` gives the violation to count and trace.
 * Inputs that are not numbers of milliseconds, booleans or a policy name throw INVALID_ARGUMENT.
 *
 * @example
 * decide({ policy: "p99-boundary", budgetMs: 90, estimate: { status: "fresh", p50Ms: 22, p99Ms: 340 },
 *   abandonCostMs: 0, relevant: true, speculationFeasible: true, anyPeerLive: true, hasFallback: true });
 * // { mode: "synchronous", reason: "budget-between-p50-and-p99-plus-abandon-cost", budgetMs: 90, ... }
 */
export function decide(input: DecideInput): Classification {
  const { policy, budgetMs, estimate, abandonCostMs, relevant } = input;
  if (!isPolicyName(policy)) throw invalid("policy", policy, `one of ${POLICY_NAMES.join(", ")}`);
  requireFinite("budgetMs", budgetMs);
  requireLatency("abandonCostMs", abandonCostMs);
  requireBoolean("relevant", relevant);
  requireBoolean("speculationFeasible", input.speculationFeasible);
  requireBoolean("anyPeerLive", input.anyPeerLive);
  requireBoolean("hasFallback", input.hasFallback);
  requireEstimate(estimate);

  const { reason, p50Ms, p50Kind, p50FloorMs } = reasonOf(input);
  const c: Classification = {
    mode: REASONS[reason].mode,
    reason,
    budgetMs,
    fanoutP50Ms: p50Ms,
    fanoutP99Ms: estimate.p99Ms,
    ...(p50Kind !== undefined && { fanoutP50Kind: p50Kind }),
    ...(estimate.p99Kind !== undefined && { fanoutP99Kind: estimate.p99Kind }),
    ...(p50FloorMs !== undefined && { p50FloorMs }),
    abandonCostMs,
    relevant,
    policy,
  };
  if (c.mode === "degrade" && !input.hasFallback) throw withoutFallback(c);
  return c;
}

/**
 * A reason and the p50 it was decided on, with that p50's kind (absent: known); an unknown estimate the
 * rule left synchronous carries the p50 floor the budget was above (absent: it had none).
 */
interface Verdict {
  readonly reason: Reason;
  readonly p50Ms: number;
  readonly p50Kind: QuantileKind | undefined;
  readonly p50FloorMs?: number;
}

/** A reason decided on the estimate's own p50. */
function onEstimate(i: DecideInput, reason: Reason): Verdict {
  return { reason, p50Ms: i.estimate.p50Ms, p50Kind: i.estimate.p50Kind };
}

function reasonOf(i: DecideInput): Verdict {
  if (!i.anyPeerLive) return onEstimate(i, "no-live-peers");
  if (i.policy === "never") return onEstimate(i, "policy-never");
  if (i.budgetMs <= 0) return onEstimate(i, "non-positive-budget");
  const v = policyVerdict(i);
  if (REASONS[v.reason].mode === "speculate" && !i.speculationFeasible) {
    return { ...v, reason: "speculation-infeasible-peer" };
  }
  return v;
}

function policyVerdict(i: DecideInput): Verdict {
  switch (i.policy) {
    case "p99-boundary":
      return boundaryVerdict(i);
    case "naive-p50": {
      const p50 = i.estimate.p50Ms;
      if (Number.isNaN(p50)) return onEstimate(i, "estimate-unknown");
      return onEstimate(i, i.budgetMs > p50 ? "naive-budget-exceeds-p50" : "budget-at-or-below-p50");
    }
    case "always-sync":
      return onEstimate(i, "policy-always-sync");
    case "never":
      return onEstimate(i, "policy-never");
  }
}

/** The rule, by the kind of estimate it is given (a new kind of estimate is a new case here). */
function boundaryVerdict(i: DecideInput): Verdict {
  const { status, p50Ms, p99Ms } = i.estimate;
  switch (status) {
    case "fresh":
      if (p99Ms < p50Ms) return onEstimate(i, "p99-below-p50");
      if (i.relevant && (i.estimate.p50Kind === "lower-bound" || i.estimate.p99Kind === "lower-bound")) {
        return onEstimate(i, lowerBoundReason(i.budgetMs, i.estimate, i.abandonCostMs));
      }
      return onEstimate(i, ruleReason(i.budgetMs, p50Ms, p99Ms, i.abandonCostMs, i.relevant));
    case "unknown": {
      // NaN compares false: a quantile never seen neither shows a violation nor forces a degrade
      if (p99Ms < p50Ms) return onEstimate(i, "p99-below-p50");
      // the floor is the only p50 an unknown estimate degrades on, and the one its degrade reports
      const floor = i.estimate.p50FloorMs;
      if (floor !== undefined && i.budgetMs <= floor) {
        return { reason: "budget-at-or-below-p50", p50Ms: floor, p50Kind: "lower-bound" };
      }
      return floor === undefined
        ? onEstimate(i, "estimate-unknown")
        : { ...onEstimate(i, "estimate-unknown"), p50FloorMs: floor };
    }
  }
}

/**
 * The rule on a fresh, decision-relevant estimate with a lower bound among its quantiles (`budget > 0`,
 * `p99 >= p50`). A lower bound says "at least this": enough to know a median does not fit, never enough
 * to know a tail does.
 */
function lowerBoundReason(b: number, e: DecideInput["estimate"], cost: number): Reason {
  if (b <= e.p50Ms) return "budget-at-or-below-p50";
  if (e.p50Kind === "lower-bound") return "p50-lower-bound";
  if (b > e.p99Ms + cost) return "p99-lower-bound";
  return "budget-between-p50-and-p99-plus-abandon-cost";
}

function requireEstimate(e: DecideInput["estimate"]): void {
  if (typeof e !== "object" || e === null) throw invalid("estimate", e, "a fan-out estimate");
  requireKind("estimate.p50Kind", e.p50Kind);
  requireKind("estimate.p99Kind", e.p99Kind);
  if (e.p50FloorMs !== undefined) requireLatency("estimate.p50FloorMs", e.p50FloorMs);
  switch (e.status) {
    case "fresh":
      requireLatency("estimate.p50Ms", e.p50Ms);
      requireLatency("estimate.p99Ms", e.p99Ms);
      return;
    case "unknown":
      requireKnownOrMissing("estimate.p50Ms", e.p50Ms);
      requireKnownOrMissing("estimate.p99Ms", e.p99Ms);
      return;
    default: {
      const status: never = e.status; // a new kind of estimate is a new case here and in boundaryVerdict
      throw invalid("estimate.status", status, '"fresh" or "unknown"');
    }
  }
}

function requireKind(field: string, kind: unknown): void {
  if (kind !== undefined && kind !== "known" && kind !== "lower-bound") {
    throw invalid(field, kind, '"known", "lower-bound" or absent');
  }
}

/** What a degrade with nothing to degrade to throws. */
function withoutFallback(c: Classification): Error {
  const reason = c.reason;
  if (isViolationReason(reason)) return SpeculationBudgetViolation.of({ ...c, reason });
  return invalid(
    "hasFallback",
    false,
    `a local/cached decision to degrade to (fanOut: fallback or usePriorOnDegrade), for a degrade (${reason})`,
  );
}
