/**
 * The founding note's predictions, judged on a report's numbers. Each is held, did not hold, not
 * shown by this run (its interval covers 0, or the report gives no interval for it), or not
 * measured (the report lacks the figure). Thresholds where the note gives no interval: a commit rate
 * within 0.1 of its 71%; "does not speculate" as at most 1% of a coordinator's requests; "degrades"
 * as at least 90% of the requests it answered (`NO_SPECULATION_MAX_SHARE`, `DEGRADE_MIN_SHARE`).
 */
import type { PairedDifference } from "./paired-difference.js";
import { coordinatorsByBudget, NAIVE, RULE } from "./report-view.js";
import type { IntervalValue, ReportView, StatsView } from "./report-view.js";
import { fmtInterval, joinAnd, ms, NOT_SHOWN, pct, rate, pivotalCommits } from "./verdict-format.js";

/** "Does not speculate": at most this share of a coordinator's requests speculated. */
export const NO_SPECULATION_MAX_SHARE = 0.01;
/** "Degrades": at least this share of the requests a coordinator answered degraded. */
export const DEGRADE_MIN_SHARE = 0.9;

export type Outcome = "held" | "did not hold" | typeof NOT_SHOWN | "not measured";

export interface Prediction {
  readonly key: string;
  /** The prediction as a short phrase. */
  readonly claim: string;
  readonly outcome: Outcome;
  /** Why, in a few words, for the verdict's sentence (empty when the verdict already gave the numbers). */
  readonly why: string;
  /** The verdict gives `why` for a prediction that held too (else only for the others). */
  readonly whyWhenHeld?: boolean;
  /** The numbers it was judged on. */
  readonly evidence: string;
}

export function judgePredictions(r: ReportView): Prediction[] {
  const rule = r.policies[RULE];
  const naive = r.policies[NAIVE];
  if (rule === undefined || naive === undefined) return [];
  const v = r.rule_vs_naive;
  return [
    naiveLooksHealthy(naive),
    fromPaired(
      "rule_fewer_commits_per_fanout",
      "fewer speculative commits per fan-out",
      v?.commits_per_fanout ?? null,
      "below",
      1,
    ),
    fromPaired(
      "rule_lower_abandon_cost_per_fanout",
      "less abandon cost per fan-out",
      v?.abandon_cost_ms_per_fanout ?? null,
      "below",
      0,
    ),
    inversion(r, rule, naive),
    abandonedWouldFlip(r, naive),
    fromPaired(
      "rule_net_value_above_naive",
      "the rule ahead of naive-p50 on net value",
      v?.net_value_per_fanout ?? null,
      "above",
      1,
    ),
    stopsBelowP99(r),
    degradesBelowP50(r),
  ].filter((p): p is Prediction => p !== null);
}

function naiveLooksHealthy(naive: StatsView): Prediction {
  const base = {
    key: "naive_commit_rate_near_71pct",
    claim: "naive-p50's commit rate looking healthy, near the note's 71%",
  };
  const perBranch = naive.commit_rate;
  const perFanout = naive.speculation_commit_rate;
  if (perBranch === null && perFanout === null)
    return {
      ...base,
      outcome: "not measured",
      why: "it never speculated",
      evidence: "naive-p50 made no speculative fan-out",
    };
  const near = (x: number | null): boolean => x !== null && Math.abs(x - 0.71) <= 0.1;
  const evidence = `${rate(perBranch)} per branch, ${rate(perFanout)} per speculative fan-out`;
  return {
    ...base,
    outcome: near(perBranch) || near(perFanout) ? "held" : "did not hold",
    why: evidence,
    evidence,
  };
}

function fromPaired(
  key: string,
  claim: string,
  d: PairedDifference | null,
  want: "above" | "below",
  digits: number,
): Prediction {
  if (d === null)
    return { key, claim, outcome: "not measured", why: "no paired requests", evidence: "no paired requests" };
  const above = d.lo95 > 0;
  const below = d.hi95 < 0;
  const outcome: Outcome =
    (want === "above" && above) || (want === "below" && below)
      ? "held"
      : above || below
        ? "did not hold"
        : NOT_SHOWN;
  return {
    key,
    claim,
    outcome,
    why: outcome === NOT_SHOWN ? "its interval covers 0" : "",
    evidence: `rule − naive-p50 per request: ${d.mean.toFixed(digits)} ${fmtInterval(d.lo95, d.hi95, digits, false)} over ${d.pairs} requests`,
  };
}

/**
 * When the rule committed no speculative fan-out, it has no fan-out-level decision-relevant commit
 * rate: the plain account of that, with naive-p50's rate at each coordinator and its interval; null
 * when the rule has a rate.
 */
export function ruleHasNoRelevanceRate(r: ReportView, rule: StatsView): string | null {
  const committedNone = rule.speculation_commit_rate === null || rule.speculation_commit_rate === 0;
  if (rule.fanout_decision_relevant_commit_rate !== null || !committedNone) return null;
  const naive = coordinatorsByBudget(r)
    .map((c) => [c, r.seed_observation?.[NAIVE]?.[c]?.decision_relevant_share_of_committed] as const)
    .filter(([, v]) => v != null && v.value !== null)
    .map(([c, v]) => `${c} ${rate(v!.value)} ${range(v!)} of ${v!.n}`);
  const why =
    rule.speculation_commit_rate === null
      ? `the rule speculated on none of its ${rule.fanouts} fan-outs — it speculates only where the budget exceeds its fan-out p99 estimate plus the abandon cost —`
      : `none of the rule's ${rule.speculative_fanouts} speculative fan-outs decided before its deadline,`;
  return `${why} so it has no fan-out-level decision-relevant commit rate to compare${naive.length === 0 ? "" : `; naive-p50's, per committed speculative fan-out: ${naive.join(", ")}`}`;
}

function inversion(r: ReportView, rule: StatsView, naive: StatsView): Prediction {
  const key = "rule_higher_decision_relevant_commit_rate";
  const claim = "a higher decision-relevant commit rate under the rule, the inversion";
  const fan = r.rule_vs_naive?.fanout_decision_relevant_commit_rate;
  const none = ruleHasNoRelevanceRate(r, rule);
  if (none !== null && (fan === undefined || fan === null)) {
    return {
      key,
      claim,
      outcome: "not measured",
      why: "the rule committed no speculative fan-out",
      evidence: none,
    };
  }
  if (fan !== undefined && fan !== null) {
    const p = fromPaired(key, claim, fan, "above", 3);
    return { ...p, evidence: `fan-out level; ${p.evidence}` };
  }
  const a = rule.pivotal_commit_rate ?? rule.decision_relevant_commit_rate;
  const b = naive.pivotal_commit_rate ?? naive.decision_relevant_commit_rate;
  if (a === null || b === null)
    return {
      key,
      claim,
      outcome: "not measured",
      why: "a policy committed nothing",
      evidence: "one of the policies committed no speculative branch",
    };
  const evidence = `${rate(a)} against ${rate(b)}, pivotal (leave-one-out) per committed branch, from ${pivotalCommits(rule)} and ${pivotalCommits(naive)} pivotal commits`;
  return { key, claim, outcome: NOT_SHOWN, why: "the report gives this rate no interval", evidence };
}

/** The note's central observation: naive-p50's abandoned fan-outs are those whose slow answers would have flipped the action. */
function abandonedWouldFlip(r: ReportView, naive: StatsView): Prediction {
  const key = "naive_abandoned_would_flip";
  const claim = "naive-p50's abandoned fan-outs being the ones whose answers would have changed the decision";
  const at = seedCoordinator(r);
  const obs = at === null ? undefined : r.seed_observation?.[NAIVE]?.[at];
  const flip = obs?.would_flip_share_of_abandoned;
  const rel = obs?.decision_relevant_share_of_committed;
  if (at !== null && flip?.value != null && rel?.value != null) {
    const apart = flip.lo95 !== null && rel.hi95 !== null && flip.lo95 > rel.hi95;
    const reversed = flip.hi95 !== null && rel.lo95 !== null && flip.hi95 < rel.lo95;
    const evidence = `at ${at}: ${rate(flip.value)} ${range(flip)} of abandoned speculative fan-outs would have flipped, against ${rate(rel.value)} ${range(rel)} of committed ones decision-relevant`;
    return {
      key,
      claim,
      outcome: apart ? "held" : reversed ? "did not hold" : NOT_SHOWN,
      why: apart || reversed ? evidence : `${evidence}; the intervals overlap`,
      evidence,
    };
  }
  if (at !== null && flip !== undefined && flip.n === 0) {
    const spec = r.by_coordinator[NAIVE]?.[at]?.speculative_fanouts ?? 0;
    const why = `naive-p50 abandoned none of its ${spec} speculative fan-outs at ${at} in this run`;
    return { key, claim, outcome: "not measured", why, evidence: why };
  }
  const share = naive.would_flip_share_of_abandoned;
  if (share !== undefined && share !== null) {
    const evidence = `${rate(share)} of its abandoned speculative fan-outs would have flipped, against ${rate(naive.fanout_decision_relevant_commit_rate)} of committed ones decision-relevant`;
    return { key, claim, outcome: NOT_SHOWN, why: `${evidence}, without intervals`, evidence };
  }
  return {
    key,
    claim,
    outcome: "not measured",
    why: "this report scores cut-off answers one at a time, not an abandoned fan-out's together",
    evidence: `${rate(naive.pivotal_share_of_cut ?? naive.high_value_share_of_lost)} of naive-p50's cut-off branches would flip the action alone`,
  };
}

function range(v: IntervalValue): string {
  return v.lo95 === null || v.hi95 === null
    ? "(no interval)"
    : `(95% interval ${rate(v.lo95)} to ${rate(v.hi95)})`;
}

/** The smallest budget between the measured fan-out p50 and p99 (the note's 90 ms case), if any. */
export function seedCoordinator(r: ReportView): string | null {
  const { fanout_p50_ms: p50, fanout_p99_ms: p99 } = r.measured;
  return (
    coordinatorsByBudget(r).find((c) => r.series.budgets[c]! > p50 && r.series.budgets[c]! <= p99) ?? null
  );
}

interface Placed {
  readonly c: string;
  readonly budget: number;
  readonly s: StatsView;
}

function placed(r: ReportView, keep: (budget: number, p50: number, p99: number) => boolean): Placed[] {
  const { fanout_p50_ms: p50, fanout_p99_ms: p99 } = r.measured;
  const byRule = r.by_coordinator[RULE];
  if (byRule === undefined || !Number.isFinite(p50) || !Number.isFinite(p99)) return [];
  return coordinatorsByBudget(r).flatMap((c) => {
    const s = byRule[c];
    const budget = r.series.budgets[c]!;
    return s !== undefined && s.fanouts > 0 && keep(budget, p50, p99) ? [{ c, budget, s }] : [];
  });
}

/**
 * Below the fan-out p99 the rule must not speculate. Above it speculation is allowed, not required
 * (the abandon cost and the coordinator's own estimate decide): that share is evidence, not a test.
 */
function stopsBelowP99(r: ReportView): Prediction | null {
  const below = placed(r, (b, _p50, p99) => b <= p99);
  const above = placed(r, (b, _p50, p99) => b > p99);
  if (below.length === 0) return null;
  const spec = (x: Placed): number => x.s.mode_mix.speculate ?? 0;
  const p99 = ms(r.measured.fanout_p99_ms);
  const say = [
    `${names(below)}, at or below the measured fan-out p99 of ${p99}, speculated on ${shares(below, spec)} of their requests`,
    ...(above.length === 0 ? [] : [`${names(above)}, above it, on ${shares(above, spec)}`]),
  ].join("; ");
  return {
    key: "rule_no_speculation_below_p99",
    claim: "the rule not speculating where the budget is at or below the fan-out p99",
    outcome: below.every((x) => spec(x) <= NO_SPECULATION_MAX_SHARE) ? "held" : "did not hold",
    why: say,
    evidence: say,
  };
}

function names(xs: readonly Placed[]): string {
  return joinAnd(xs.map((x) => x.c));
}

function shares(xs: readonly Placed[], f: (x: Placed) => number): string {
  return joinAnd(xs.map((x) => pct(f(x))));
}

function degradesBelowP50(r: ReportView): Prediction | null {
  const below = placed(r, (b, p50) => b <= p50);
  if (below.length === 0) return null;
  const answered = (x: Placed): number => 1 - (x.s.mode_mix.error ?? 0);
  const share = (x: Placed): number => (answered(x) <= 0 ? 0 : (x.s.mode_mix.degrade ?? 0) / answered(x));
  const evidence = `${names(below)}, at or below the measured fan-out p50 of ${ms(r.measured.fanout_p50_ms)}, degraded on ${shares(below, share)} of the requests ${below.length === 1 ? "it" : "they"} answered`;
  return {
    key: "rule_degrades_below_p50",
    claim: "the rule degrading where the budget is at or below the fan-out p50",
    outcome: below.every((x) => share(x) >= DEGRADE_MIN_SHARE) ? "held" : "did not hold",
    why: evidence,
    evidence,
  };
}
