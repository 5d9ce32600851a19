/**
 * Net value per fan-out at the scenario's weights, per coordinator and over all of them: each policy's
 * mean with its 95% interval, and every pair of policies compared on the same requests (the paired
 * difference, a − b). Which policy wins where is read from these: a lead whose paired interval
 * covers 0 is not shown by the run.
 */
import { meanInterval, pairCalls, pairedDifference } from "./paired-difference.js";
import type { MeanInterval, PairedDifference } from "./paired-difference.js";
import type { ScoredCall } from "./score-call.js";
import type { ValueWeights } from "./scenario-types.js";
import { netValue } from "./value-model.js";

export interface PolicyPair {
  readonly a: string;
  readonly b: string;
  /** a − b per request over the requests both answered; null under two pairs. */
  readonly diff: PairedDifference | null;
}

export interface NetValueGroup {
  /** The coordinator's budget (ms); null for the group of all coordinators. */
  readonly budget_ms: number | null;
  readonly policies: Record<string, MeanInterval | null>;
  /** Every pair of policies, a before b in the scenario's order. */
  readonly paired: readonly PolicyPair[];
}

export interface NetValueSummary {
  readonly weights: ValueWeights;
  /** Per coordinator, then `all` (every coordinator's fan-outs together). */
  readonly groups: Record<string, NetValueGroup>;
}

export const ALL_COORDINATORS = "all";

export function netValueSummary(
  byPolicy: ReadonlyMap<string, readonly ScoredCall[]>,
  coordinators: readonly { readonly name: string; readonly budgetMs: number }[],
  weights: ValueWeights,
): NetValueSummary {
  const groups: Record<string, NetValueGroup> = {};
  const group = (keep: (c: ScoredCall) => boolean, budget: number | null): NetValueGroup => {
    const calls = new Map([...byPolicy].map(([p, cs]) => [p, cs.filter(keep)] as const));
    const names = [...calls.keys()];
    const policies: Record<string, MeanInterval | null> = {};
    for (const [p, cs] of calls) policies[p] = meanInterval(cs.map((c) => netValue(c, weights)));
    const paired: PolicyPair[] = [];
    names.forEach((a, i) => {
      for (const b of names.slice(i + 1)) {
        const pairs = pairCalls(calls.get(a)!, calls.get(b)!);
        paired.push({ a, b, diff: pairedDifference(pairs, (c) => netValue(c, weights)) });
      }
    });
    return { budget_ms: budget, policies, paired };
  };
  for (const c of coordinators) groups[c.name] = group((x) => x.coordinator === c.name, c.budgetMs);
  groups[ALL_COORDINATORS] = group(() => true, null);
  return { weights, groups };
}
