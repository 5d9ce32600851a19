/**
 * Two targets the rule's numbers must meet at the seed's coordinator (the smallest budget between the
 * measured fan-out p50 and p99), judged for the verdict: the coordinator's own fan-out p99 estimate
 * (median over its decisions) within `P99_ESTIMATE_RATIO` of the measured fan-out p99 — a rule fed a
 * tail capped at its own budget speculates on the tail it should avoid — and its deadline misses under
 * the rule at most `MISS_MARGIN` above `never`'s there (a policy that never fans out measures the
 * machine's own floor).
 */
import { seedCoordinator } from "./predictions.js";
import { RULE } from "./report-view.js";
import type { ReportView, StatsView } from "./report-view.js";
import { ms, p99IntervalText, pct } from "./verdict-format.js";

/** The p99 estimate is "right" within this factor of the measured fan-out p99, either way. */
export const P99_ESTIMATE_RATIO: readonly [number, number] = [0.5, 2];
/** The rule's deadline-miss share may exceed `never`'s by at most this (2 points). */
export const MISS_MARGIN = 0.02;

export interface SeedTargets {
  readonly coordinator: string;
  /** Median p99 estimate / measured fan-out p99 (null when the coordinator gave no estimate). */
  readonly p99Ratio: number | null;
  /**
   * The same against the ends of the measured p99's 95% interval: [estimate / upper end, estimate / lower
   * end]; an end is null where the interval has none (or the report predates it). Reported beside the
   * ratio, not used for `p99Held`.
   */
  readonly p99RatioRange: readonly [number | null, number | null];
  readonly p99Held: boolean | null;
  /** Deadline-miss shares at the coordinator (null when a policy is missing there). */
  readonly ruleMissShare: number | null;
  readonly neverMissShare: number | null;
  readonly missesHeld: boolean | null;
}

export function seedTargets(r: ReportView): SeedTargets | null {
  const c = seedCoordinator(r);
  if (c === null) return null;
  const est = r.measured.coordinator_estimates[c];
  const measured = r.measured.fanout_p99_ms;
  const p99 = est?.p99_ms ?? null;
  const ratio = p99 === null || !(measured > 0) ? null : p99 / measured;
  const iv = r.measured.fanout_p99_interval_ms;
  const over = (end: number | null | undefined): number | null =>
    p99 === null || end === null || end === undefined || !(end > 0) ? null : p99 / end;
  const share = (s: StatsView | undefined): number | null =>
    s === undefined || s.fanouts === 0 ? null : s.deadline_misses / s.fanouts;
  const rule = share(r.by_coordinator[RULE]?.[c]);
  const never = share(r.by_coordinator.never?.[c]);
  return {
    coordinator: c,
    p99Ratio: ratio,
    p99RatioRange: [over(iv?.hi), over(iv?.lo)],
    p99Held: ratio === null ? null : ratio >= P99_ESTIMATE_RATIO[0] && ratio <= P99_ESTIMATE_RATIO[1],
    ruleMissShare: rule,
    neverMissShare: never,
    missesHeld: rule === null || never === null ? null : rule <= never + MISS_MARGIN,
  };
}

/** The verdict's sentence on the targets; null when no coordinator's budget lies between p50 and p99. */
export function seedTargetsSentence(r: ReportView): string | null {
  const t = seedTargets(r);
  if (t === null) return null;
  const c = t.coordinator;
  const est = r.measured.coordinator_estimates[c];
  const parts: string[] = [];
  if (t.p99Ratio === null || est?.p99_ms === null || est === undefined) {
    parts.push("it reported no p99 estimate");
  } else {
    const lb = est.p99_lower_bound_share;
    const bound = lb === null || lb === undefined ? "" : `, a lower bound on ${pct(lb)} of its decisions,`;
    const [lo, hi] = P99_ESTIMATE_RATIO;
    parts.push(
      `its p99 estimate (median over its decisions) was ${ms(est.p99_ms)}${bound} ${t.p99Ratio.toFixed(2)}× the measured fan-out p99 of ${ms(r.measured.fanout_p99_ms)}${rangeText(r, t)}: ` +
        (t.p99Held === true ? `**within ${lo}–${hi}×**` : `**outside the ${lo}–${hi}× it should be within**`),
    );
  }
  if (t.ruleMissShare !== null && t.neverMissShare !== null) {
    parts.push(
      `the rule missed ${pct(t.ruleMissShare)} of deadlines there against never's ${pct(t.neverMissShare)} (the machine's floor): ` +
        (t.missesHeld === true
          ? `**within ${Math.round(MISS_MARGIN * 100)} points**`
          : `**more than ${Math.round(MISS_MARGIN * 100)} points above it**`),
    );
  }
  return `At ${c} (${r.series.budgets[c]} ms, between the measured fan-out p50 and p99), ${parts.join("; ")}.`;
}

/** " (0.41–0.83× against its 95% interval 183 ms to 402 ms)"; "" for a report without the interval. */
function rangeText(r: ReportView, t: SeedTargets): string {
  const iv = r.measured.fanout_p99_interval_ms;
  if (iv === undefined) return "";
  const [lo, hi] = t.p99RatioRange;
  const text = p99IntervalText(iv, r.measured.fanout_samples);
  if (hi === null) return ` (its ${text})`;
  return lo === null
    ? ` (at most ${hi.toFixed(2)}× against its ${text})`
    : ` (${lo.toFixed(2)}–${hi.toFixed(2)}× against its ${text})`;
}
