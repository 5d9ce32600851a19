/**
 * The one table of reasons: for each `Reason`, the mode it gives, the condition under which `decide`
 * gives it (true for the numbers it returns), that condition with one classification's numbers, and
 * what the coordinator then does. `describeClassification`, `tailswarm explain` and the README's rule
 * table print from it.
 */
import type { Classification, Mode, Reason } from "./types.js";

export interface ReasonSpec {
  readonly mode: Mode;
  /** The condition, in the rule's notation (`budget`, `p50`, `p99`, `abandon_cost` of the fan-out). */
  readonly when: string;
  /** The condition with the numbers of `c`. */
  readonly inequality: (c: Classification) => string;
  /** What the coordinator does, one sentence. */
  readonly effect: string;
  /**
   * A `SpeculationBudgetViolation` of this kind: met whatever the fallback (counted, traced, turned into
   * degrade), or only when there is no fallback to degrade to (then thrown).
   */
  readonly violation?: "always" | "without-fallback";
}

export const REASONS: { readonly [R in Reason]: ReasonSpec } = {
  "budget-exceeds-p99-plus-abandon-cost": {
    mode: "speculate",
    when: "`budget > p99 + abandon_cost`, decision-relevant, a fresh estimate whose p50 and p99 are known (not lower bounds), every chosen peer speculation-feasible",
    inequality: (c) => `${budget(c)} > ${tail(c)}`,
    effect: "speculate: issue the branches, carry on, commit what arrives by the deadline, abandon the rest",
  },
  "naive-budget-exceeds-p50": {
    mode: "speculate",
    when: "policy `naive-p50`: `budget > p50` (p99, abandon cost, relevance and freshness ignored), every chosen peer speculation-feasible",
    inequality: (c) => `${budget(c)} > ${p50(c)} (naive: p99 and abandon cost ignored)`,
    effect: "speculate: the baseline that reproduces the failure the rule avoids",
  },
  "speculation-infeasible-peer": {
    mode: "synchronous",
    when: "the policy would speculate (`budget > p99 + abandon_cost` under the rule, `budget > p50` under `naive-p50`), but a chosen peer is not speculation-feasible: its fresh p99 exceeds the budget, or is unknown",
    inequality: (c) =>
      `a chosen peer is not speculation-feasible (fresh p99 > ${budget(c)}, or unknown), although ${
        c.budgetMs > c.fanoutP99Ms + c.abandonCostMs
          ? `${budget(c)} > ${tail(c)}`
          : `${budget(c)} > ${p50(c)}`
      }`,
    effect: "issue synchronously: a speculative branch never goes to a peer that may not answer in time",
  },
  "budget-between-p50-and-p99-plus-abandon-cost": {
    mode: "synchronous",
    when: "`p50 < budget <= p99 + abandon_cost`, decision-relevant, a fresh estimate with a known p50 (p99 known, or a lower bound: the true tail is longer still)",
    inequality: (c) => `${p50(c)} < ${budget(c)} <= ${tail(c)}`,
    effect:
      "issue synchronously: wait for the required answers or the deadline and use partial results; nothing is cancelled, so no abandon cost (branches still out at the deadline end there, `late`)",
  },
  "p99-lower-bound": {
    mode: "synchronous",
    when: "`p50 < budget` and `budget > p99 + abandon_cost`, but p99 is only a lower bound (it lies in censored mass beyond the last completion), decision-relevant, a fresh estimate with a known p50: the true tail may not fit",
    inequality: (c) =>
      `${p50(c)} < ${budget(c)} > ${tail(c)}, but the true p99 is at least that, possibly more: the tail is not known to fit`,
    effect: "issue synchronously: a tail the coordinator has not seen is never taken to fit the budget",
  },
  "p50-lower-bound": {
    mode: "synchronous",
    when: "`budget > p50`, but p50 is only a lower bound (so is p99), decision-relevant, a fresh estimate: the true median may or may not fit",
    inequality: (c) =>
      `${budget(c)} > ${p50(c)}, but the true p50 is at least that, possibly more: neither the median nor the tail is known to fit`,
    effect: "issue synchronously: neither speculate on a tail not seen nor degrade on a median that may fit",
  },
  "not-decision-relevant": {
    mode: "synchronous",
    when: "`budget > p50`, the answers cannot change the action, a fresh estimate",
    inequality: (c) =>
      `not decision-relevant (the answers cannot change the action) and ${budget(c)} > ${p50(c)}`,
    effect: "issue synchronously: speculation would buy nothing, the answers cannot change the action",
  },
  "estimate-unknown": {
    mode: "synchronous",
    when: "the estimate is unknown (stale, under-sampled, a peer never seen) and the budget is above its p50 floor (a 90% lower confidence bound of the median of the set's own recent fan-outs, or of a member's when every answer is needed), or it has none",
    inequality: (c) =>
      `fan-out estimate unknown (stale or under-sampled) and ${
        c.p50FloorMs === undefined ? "no p50 floor" : `${budget(c)} > p50 floor ${ms(c.p50FloorMs)}`
      }`,
    effect: "issue synchronously: an unknown estimate never speculates",
  },
  "policy-always-sync": {
    mode: "synchronous",
    when: "policy `always-sync`, `budget > 0`",
    inequality: () => "policy 'always-sync'",
    effect: "issue synchronously: this policy never speculates",
  },
  "budget-at-or-below-p50": {
    mode: "degrade",
    when: "`0 < budget <= p50` (a lower-bound p50 too: the true median is at least that); under the rule, on an unknown estimate, only its p50 floor, a lower bound: a 90% lower confidence bound of the median of the set's own recent fan-outs, or of a member's when every answer is needed",
    inequality: (c) => `${budget(c)} <= ${p50(c)}`,
    effect:
      "degrade: not even a median round trip fits; use the local or cached decision (none: a `SpeculationBudgetViolation` is thrown)",
    violation: "without-fallback",
  },
  "non-positive-budget": {
    mode: "degrade",
    when: "`budget <= 0`",
    inequality: (c) => `${budget(c)} <= 0`,
    effect:
      "degrade: the budget is spent; a `SpeculationBudgetViolation`, counted and traced, then the local or cached decision (none: thrown)",
    violation: "always",
  },
  "p99-below-p50": {
    mode: "degrade",
    when: "`p99 < p50` (`budget > 0`): the estimate is corrupt or stale",
    inequality: (c) => `p99${bound(c.fanoutP99Kind)} ${ms(c.fanoutP99Ms)} < ${p50(c)}`,
    effect:
      "degrade: a `SpeculationBudgetViolation`, counted and traced, then the local or cached decision (none: thrown)",
    violation: "always",
  },
  "policy-never": {
    mode: "degrade",
    when: "policy `never`",
    inequality: () => "policy 'never'",
    effect: "degrade: this policy never fans out",
  },
  "no-live-peers": {
    mode: "degrade",
    when: "no peer is live",
    inequality: () => "no live peer to fan out to",
    effect: "degrade: there is no peer to ask; use the local or cached decision",
  },
};

function budget(c: Classification): string {
  return `budget ${ms(c.budgetMs)}`;
}

function p50(c: Classification): string {
  return `p50${bound(c.fanoutP50Kind)} ${ms(c.fanoutP50Ms)}`;
}

function tail(c: Classification): string {
  return `p99${bound(c.fanoutP99Kind)} ${ms(c.fanoutP99Ms)} + abandon cost ${ms(c.abandonCostMs)} = ${ms(c.fanoutP99Ms + c.abandonCostMs)}`;
}

/** A lower-bound quantile says so where its number is shown: the true value is at least that. */
function bound(kind: Classification["fanoutP50Kind"]): string {
  return kind === "lower-bound" ? " (lower bound)" : "";
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${value} ms` : `${value}`;
}
