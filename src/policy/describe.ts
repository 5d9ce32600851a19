/**
 * Human-readable account of a classification: the inequality that decided it, with the numbers, and
 * what the coordinator does. Used by `tailswarm explain`, and fit for span events and logs.
 */
import type { Classification } from "./types.js";

export interface ClassificationAccount {
  /** The inequality that decided, with the numbers, e.g. `budget 400 ms > p99 340 ms + abandon cost 20 ms = 360 ms`. */
  readonly inequality: string;
  /** What the coordinator does in this mode, one sentence. */
  readonly effect: string;
}

/**
 * @example
 * describeClassification(classify(90, 22, 340, 0, true)).inequality;
 * // "p50 22 ms < budget 90 ms <= p99 340 ms + abandon cost 0 ms = 340 ms"
 */
export function describeClassification(c: Classification): ClassificationAccount {
  const budget = `budget ${ms(c.budgetMs)}`;
  const p50 = `p50 ${ms(c.fanoutP50Ms)}`;
  const tail = `p99 ${ms(c.fanoutP99Ms)} + abandon cost ${ms(c.abandonCostMs)} = ${ms(c.fanoutP99Ms + c.abandonCostMs)}`;
  switch (c.reason) {
    case "budget-exceeds-p99-plus-abandon-cost":
      return {
        inequality: `${budget} > ${tail}`,
        effect:
          "branch speculatively: issue the branches, carry on, commit what arrives by the deadline, abandon the rest",
      };
    case "budget-between-p50-and-p99-plus-abandon-cost":
      return {
        inequality: `${p50} < ${budget} <= ${tail}`,
        effect:
          "issue synchronously: wait for the required answers or the deadline and use partial results, no abandon cost",
      };
    case "not-decision-relevant":
      return {
        inequality: `not decision-relevant (the answers cannot change the action) and ${budget} > ${p50}`,
        effect: "issue synchronously: speculation would buy nothing, the answers cannot flip the action",
      };
    case "estimate-unknown":
      return {
        inequality: `fan-out estimate unknown (stale or under-sampled) and not (${budget} <= ${p50})`,
        effect: "issue synchronously: an unknown estimate never speculates",
      };
    case "budget-at-or-below-p50":
      return {
        inequality: `${budget} <= ${p50}`,
        effect: "degrade: no fan-out, not even a median round trip fits; use the local or cached decision",
      };
    case "policy-never":
      return { inequality: "policy 'never'", effect: "degrade: this policy never fans out" };
    case "policy-always-sync":
      return {
        inequality: "policy 'always-sync'",
        effect: "issue synchronously: this policy never speculates",
      };
    case "naive-budget-exceeds-p50":
      return {
        inequality: `${budget} > ${p50} (naive: p99 and abandon cost ignored)`,
        effect: "branch speculatively (baseline that reproduces the seed's failure)",
      };
  }
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${value} ms` : `${value}`;
}
