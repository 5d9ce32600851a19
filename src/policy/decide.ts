/**
 * `decide`: the one place the mode of a fan-out is decided. It takes every fact that can change the
 * mode and returns the final classification, whose reason's condition (`REASONS`) holds for the
 * numbers returned. The engine, the router adapter and the node act on its answer and never rewrite it.
 */
import { invalid } from "../errors.js";
import type { FanoutEstimate } from "../estimate/types.js";
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
    "status" | "p50Ms" | "p99Ms" | "p50Kind" | "p99Kind" | "horizonMs" | "freshMembersP50Ms"
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
 *      unknown estimate, never speculate — `p99 < p50` when both are numbers is a violation,
 *      `budget <= p50` degrades when that p50 is a lower bound at or beyond the horizon (calls were cut
 *      short of it: see `censoredP50`), or when the budget is at or below the largest p50 among the
 *      set's fresh members (`freshMembersP50Ms`, a lower bound), otherwise `estimate-unknown`;
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

  const reason = reasonOf(input);
  // a degrade on the fresh members' floor reports that floor, so that its inequality holds as printed
  const floor =
    policy === "p99-boundary" &&
    reason === "budget-at-or-below-p50" &&
    !(budgetMs <= estimate.p50Ms && censoredP50(estimate)) &&
    freshFloorDegrades(input);
  const c: Classification = {
    mode: REASONS[reason].mode,
    reason,
    budgetMs,
    fanoutP50Ms: floor ? estimate.freshMembersP50Ms! : estimate.p50Ms,
    fanoutP99Ms: estimate.p99Ms,
    ...(floor
      ? { fanoutP50Kind: "lower-bound" as const }
      : estimate.p50Kind !== undefined && { fanoutP50Kind: estimate.p50Kind }),
    ...(estimate.p99Kind !== undefined && { fanoutP99Kind: estimate.p99Kind }),
    abandonCostMs,
    relevant,
    policy,
  };
  if (c.mode === "degrade" && !input.hasFallback) throw withoutFallback(c);
  return c;
}

function reasonOf(i: DecideInput): Reason {
  if (!i.anyPeerLive) return "no-live-peers";
  if (i.policy === "never") return "policy-never";
  if (i.budgetMs <= 0) return "non-positive-budget";
  const reason = policyReason(i);
  if (REASONS[reason].mode === "speculate" && !i.speculationFeasible) return "speculation-infeasible-peer";
  return reason;
}

function policyReason(i: DecideInput): Reason {
  switch (i.policy) {
    case "p99-boundary":
      return boundaryReason(i);
    case "naive-p50": {
      const p50 = i.estimate.p50Ms;
      if (Number.isNaN(p50)) return "estimate-unknown";
      return i.budgetMs > p50 ? "naive-budget-exceeds-p50" : "budget-at-or-below-p50";
    }
    case "always-sync":
      return "policy-always-sync";
    case "never":
      return "policy-never";
  }
}

/** The rule, by the kind of estimate it is given (a new kind of estimate is a new case here). */
function boundaryReason(i: DecideInput): Reason {
  const { status, p50Ms, p99Ms } = i.estimate;
  switch (status) {
    case "fresh":
      if (p99Ms < p50Ms) return "p99-below-p50";
      if (i.relevant && (i.estimate.p50Kind === "lower-bound" || i.estimate.p99Kind === "lower-bound")) {
        return lowerBoundReason(i.budgetMs, i.estimate, i.abandonCostMs);
      }
      return ruleReason(i.budgetMs, p50Ms, p99Ms, i.abandonCostMs, i.relevant);
    case "unknown":
      // NaN compares false: a quantile never seen neither shows a violation nor forces a degrade
      if (p99Ms < p50Ms) return "p99-below-p50";
      if (i.budgetMs <= p50Ms && censoredP50(i.estimate)) return "budget-at-or-below-p50";
      if (freshFloorDegrades(i)) return "budget-at-or-below-p50";
      return "estimate-unknown";
  }
}

/**
 * An unknown estimate of a set that needs every answer, one of whose fresh members has a p50 at or past
 * the budget (`freshMembersP50Ms`, the largest): the fan-out waits for that member, so its own p50 is at
 * least that, whatever the others do. The degrade then reports that floor as its p50, a lower bound.
 */
function freshFloorDegrades(i: DecideInput): boolean {
  const floor = i.estimate.freshMembersP50Ms;
  return i.estimate.status === "unknown" && floor !== undefined && floor > 0 && i.budgetMs <= floor;
}

/**
 * An unknown estimate's p50 that calls were cut short of: a lower bound at or beyond the horizon, so the
 * true median is at least it however few the samples. Only such a p50 degrades an unknown estimate. One
 * from a handful of completions (a lower bound only because they are few, or known) is no ground to
 * degrade on, and degrading issues no branch, so the estimate would stay unknown for as long as the
 * coordinator's own fan-outs were its only source.
 */
function censoredP50(e: DecideInput["estimate"]): boolean {
  const h = e.horizonMs;
  return e.p50Kind === "lower-bound" && h !== undefined && Number.isFinite(h) && e.p50Ms >= h;
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
  if (e.horizonMs !== undefined && !(typeof e.horizonMs === "number" && e.horizonMs >= 0)) {
    throw invalid("estimate.horizonMs", e.horizonMs, "a number of milliseconds >= 0, Infinity or absent");
  }
  if (e.freshMembersP50Ms !== undefined) requireLatency("estimate.freshMembersP50Ms", e.freshMembersP50Ms);
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
      const status: never = e.status; // a new kind of estimate is a new case here and in boundaryReason
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
