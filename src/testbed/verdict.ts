/**
 * The report's verdict: one paragraph generated from report.json's numbers, the first thing
 * report.html and report.txt say. Which policy wins where on net value (with the paired 95%
 * intervals), why the leader leads, what the rule changed against naive-p50, and which of the
 * founding note's predictions held, which did not, and which the run cannot tell. A lead whose
 * interval covers 0 is "not shown by this run"; nothing is claimed that the numbers do not carry.
 */
import { ALL_COORDINATORS } from "./net-value-intervals.js";
import type { NetValueGroup } from "./net-value-intervals.js";
import type { PairedDifference } from "./paired-difference.js";
import { judgePredictions, ruleHasNoRelevanceRate } from "./predictions.js";
import type { Prediction } from "./predictions.js";
import { seedTargetsSentence } from "./seed-targets.js";
import { coordinatorsByBudget, NAIVE, RULE } from "./report-view.js";
import type { ReportView, StatsView } from "./report-view.js";
import { esc } from "../sim/svg-chart.js";
import { fmtInterval, joinAnd, ms, NOT_SHOWN, pct, rate, pivotalCommits, signed } from "./verdict-format.js";

export interface Verdict {
  /** The paragraph, plain text. */
  readonly text: string;
  /** The same paragraph as HTML, its key phrases in <strong>. */
  readonly html: string;
  readonly predictions: readonly Prediction[];
}

/** Key phrases are written **so** while the paragraph is built; plain text drops the marks. */
const STRONG = /\*\*(.+?)\*\*/g;

export function verdict(r: ReportView): Verdict {
  const predictions = judgePredictions(r);
  const parts = [
    r.interrupted ? `This run was interrupted after ${r.duration_s} s: its numbers are partial.` : null,
    winnersSentence(r),
    whySentence(r),
    gridSentence(r),
    ruleSentence(r),
    predictionsSentence(predictions),
    seedTargetsSentence(r),
  ].filter((s): s is string => s !== null);
  const marked = parts.join(" ");
  return {
    text: marked.replace(STRONG, "$1"),
    html: marked
      .split(STRONG)
      .map((x, i) => (i % 2 === 1 ? `<strong>${esc(x)}</strong>` : esc(x)))
      .join(""),
    predictions,
  };
}

// ---- which policy wins where ----

export interface Lead {
  readonly best: string;
  readonly mean: number;
  readonly next: string | null;
  /** best − next on the same requests. */
  readonly diff: PairedDifference | null;
}

/** The policy with the highest mean net value in a group, and its paired lead over the runner-up. */
export function leadOf(g: NetValueGroup): Lead | null {
  const ranked = Object.entries(g.policies)
    .flatMap(([p, m]) => (m === null ? [] : [{ p, mean: m.mean }]))
    .sort((a, b) => b.mean - a.mean);
  const first = ranked[0];
  if (first === undefined) return null;
  const next = ranked[1]?.p ?? null;
  return { best: first.p, mean: first.mean, next, diff: next === null ? null : pairedOf(g, first.p, next) };
}

/** a − b from a group's pairs, whichever order the pair was stored in. */
export function pairedOf(g: NetValueGroup, a: string, b: string): PairedDifference | null {
  for (const p of g.paired) {
    if (p.diff === null) continue;
    if (p.a === a && p.b === b) return p.diff;
    if (p.a === b && p.b === a)
      return { pairs: p.diff.pairs, mean: -p.diff.mean, lo95: -p.diff.hi95, hi95: -p.diff.lo95 };
  }
  return null;
}

/** Whether a lead is shown: its paired interval lies above 0. */
export function leadShown(l: Lead): boolean {
  return l.diff !== null && l.diff.lo95 > 0;
}

function winnersSentence(r: ReportView): string | null {
  const w = r.value_model.weights;
  const head = `On net value per fan-out at the scenario's weights (correct answer ${w.correct}, latency ${w.latencyPerMs}/ms, wasted work ${w.abandonPerMs}/ms, miss ${w.miss})`;
  const nv = r.net_value;
  if (nv === undefined) {
    const best = Object.entries(r.policies).sort(
      (a, b) => b[1].net_value_per_fanout - a[1].net_value_per_fanout,
    )[0];
    return best === undefined
      ? null
      : `${head} **${best[0]} leads** with ${signed(best[1].net_value_per_fanout)}; this report.json carries no intervals.`;
  }
  const leads = coordinatorsByBudget(r).flatMap((c) => {
    const g = nv.groups[c];
    const l = g === undefined ? null : leadOf(g);
    return l === null ? [] : [{ c, l }];
  });
  if (leads.length === 0) return null;
  const at = (c: string, l: Lead): string => `at ${c} (${r.series.budgets[c]} ms) ${leadBy(l)}`;
  const leaders = [...new Set(leads.map((x) => x.l.best))];
  const body =
    leaders.length === 1
      ? `**${leaders[0]} leads at every coordinator**: ${leads.map((x) => at(x.c, x.l)).join(", ")}`
      : leaders
          .map((p) => {
            const mine = leads.filter((x) => x.l.best === p);
            return `**${p} leads** ${mine.map((x) => at(x.c, x.l)).join(" and ")}`;
          })
          .join("; ");
  const all = nv.groups[ALL_COORDINATORS];
  const overall = all === undefined ? null : leadOf(all);
  const tail = overall === null ? "" : `; **over all coordinators ${overall.best} leads** ${leadBy(overall)}`;
  return `${head}, ${body}${tail}.`;
}

/** "by 3.0 over naive-p50 (95% interval −3.3 to 9.2: not shown by this run)" */
function leadBy(l: Lead): string {
  if (l.next === null) return "alone";
  if (l.diff === null) return `over ${l.next} (no paired interval)`;
  return `by ${l.diff.mean.toFixed(1)} over ${l.next} ${fmtInterval(l.diff.lo95, l.diff.hi95, 1, !leadShown(l))}`;
}

/** Why the overall leader beats the rule: the value model's terms that carry the gap, largest first. */
function whySentence(r: ReportView): string | null {
  const all = r.net_value?.groups[ALL_COORDINATORS];
  const lead = all === undefined ? null : leadOf(all);
  const rule = r.policies[RULE];
  if (lead === null || lead.best === RULE || rule === undefined) return null;
  const top = r.policies[lead.best];
  if (top === undefined) return null;
  const w = r.value_model.weights;
  // the value model's waste term (value-model.ts): the continuation thrown away, and peer work cut off or
  // redundant; a report written before that accounting charged abandoned and late lost work
  const lost = (s: StatsView): number =>
    (s as Partial<StatsView>).peer_work_cut_ms_per_fanout === undefined
      ? s.abandon_cost_ms_per_fanout + s.late_lost_work_ms_per_fanout
      : s.thrown_ms_per_fanout + s.peer_work_cut_ms_per_fanout + s.peer_work_redundant_ms_per_fanout;
  const missRate = (s: StatsView): number => (s.fanouts === 0 ? 0 : s.deadline_misses / s.fanouts);
  const terms = [
    {
      v: -w.latencyPerMs * (top.completion_ms_mean - rule.completion_ms_mean),
      say: `latency (${ms(top.completion_ms_mean)} against ${ms(rule.completion_ms_mean)} from request to done)`,
    },
    {
      v: -w.miss * (missRate(top) - missRate(rule)),
      say: `deadline misses (${pct(missRate(top))} against ${pct(missRate(rule))})`,
    },
    {
      v: -w.abandonPerMs * (lost(top) - lost(rule)),
      say: `wasted work (${ms(lost(top))} against ${ms(lost(rule))} per fan-out)`,
    },
    {
      v: w.correct * (top.accuracy - rule.accuracy),
      say: `accuracy (${rate(top.accuracy)} against ${rate(rule.accuracy)})`,
    },
  ].sort((a, b) => b.v - a.v);
  const carry = terms.filter((t) => t.v >= 0.5).slice(0, 2);
  if (carry.length === 0) return null;
  const against = terms.filter((t) => t.v <= -0.5).slice(-1);
  const gap = top.net_value_per_fanout - rule.net_value_per_fanout;
  let out = `Of ${lead.best}'s ${gap.toFixed(1)} over the rule, ${joinAnd(carry.map((t) => `${t.v.toFixed(1)} is ${t.say}`))}`;
  if (against.length > 0) out += `, less ${(-against[0]!.v).toFixed(1)} in ${against[0]!.say}`;
  const ev = r.measured.event_share;
  if (lead.best === "never" && ev !== null)
    out += `: never answers with the prior at once, and the prior was right on ${pct(1 - ev)} of requests`;
  return `${out}.`;
}

function gridSentence(r: ReportView): string | null {
  const rows = r.sensitivity;
  if (rows.length === 0) return null;
  const wins = new Map<string, number>();
  for (const row of rows) for (const p of row.best) wins.set(p, (wins.get(p) ?? 0) + 1);
  const winText = joinAnd([...wins.entries()].sort((a, b) => b[1] - a[1]).map(([p, n]) => `${p} at ${n}`));
  let out = `Over the grid's ${rows.length} weightings the best is ${winText}`;
  const d = rows
    .map((row) => row.rule_minus_naive)
    .filter((x): x is PairedDifference => x !== null && x !== undefined);
  if (d.length > 0) {
    const above = d.filter((x) => x.lo95 > 0).length;
    const below = d.filter((x) => x.hi95 < 0).length;
    out += `; the rule is measurably above naive-p50 at ${above}, below it at ${below}, and ${NOT_SHOWN} either way at ${d.length - above - below}`;
  }
  return `${out}.`;
}

// ---- what the rule changed ----

function ruleSentence(r: ReportView): string | null {
  const v = r.rule_vs_naive;
  const rule = r.policies[RULE];
  const naive = r.policies[NAIVE];
  if (v === null || rule === undefined || naive === undefined) return null;
  const parts: string[] = [];
  const c = v.commits_per_fanout;
  if (c !== null) parts.push(change(c, "made", "fewer", "more", "speculative commits per fan-out", 1));
  const a = v.abandon_cost_ms_per_fanout;
  if (a !== null)
    parts.push(change(a, "lost", "ms less", "ms more", "work to abandoned branches per fan-out", 0));
  const n = v.net_value_per_fanout;
  if (n !== null) parts.push(change(n, "", "", "", "net value per fan-out", 1));
  return `Against naive-p50 on the same ${v.pairs} requests the rule ${joinAnd(parts)}; ${relevanceClause(r, rule, naive)}.`;
}

/**
 * "made 18.9 fewer speculative commits per fan-out (95% interval 16.1 to 21.8)": the magnitude and
 * its interval in the same direction; a difference whose interval covers 0 is given as it is.
 */
function change(
  d: PairedDifference,
  verb: string,
  less: string,
  more: string,
  what: string,
  digits: number,
): string {
  const shown = d.lo95 > 0 || d.hi95 < 0;
  if (!shown || (less === "" && more === "")) {
    const lead = shown ? (d.mean < 0 ? "lost" : "gained") : "differed by";
    const x = shown ? Math.abs(d.mean) : d.mean;
    const [lo, hi] = shown && d.mean < 0 ? [-d.hi95, -d.lo95] : [d.lo95, d.hi95];
    const unit = less.startsWith("ms") ? " ms" : "";
    return `${lead} ${x.toFixed(digits)}${unit} in ${what} ${fmtInterval(lo, hi, digits, !shown)}`;
  }
  const down = d.mean < 0;
  const [lo, hi] = down ? [-d.hi95, -d.lo95] : [d.lo95, d.hi95];
  return `${verb} ${Math.abs(d.mean).toFixed(digits)} ${down ? less : more} ${what} ${fmtInterval(lo, hi, digits, false)}`;
}

function relevanceClause(r: ReportView, rule: StatsView, naive: StatsView): string {
  const fan = r.rule_vs_naive?.fanout_decision_relevant_commit_rate;
  const known = (x: number | null | undefined): boolean => x !== undefined && x !== null;
  const none = ruleHasNoRelevanceRate(r, rule);
  if (none !== null && !known(fan?.mean)) return none;
  if (
    known(rule.fanout_decision_relevant_commit_rate) ||
    known(naive.fanout_decision_relevant_commit_rate) ||
    (fan !== undefined && fan !== null)
  ) {
    const base = `its fan-out-level decision-relevant commit rate was ${rate(rule.fanout_decision_relevant_commit_rate)} against ${rate(naive.fanout_decision_relevant_commit_rate)}`;
    if (fan === undefined || fan === null) return `${base} (no interval)`;
    return `${base}, a difference of ${fan.mean.toFixed(3)} ${fmtInterval(fan.lo95, fan.hi95, 3, !(fan.lo95 > 0 || fan.hi95 < 0))}`;
  }
  const a = rule.pivotal_commit_rate ?? rule.decision_relevant_commit_rate;
  const b = naive.pivotal_commit_rate ?? naive.decision_relevant_commit_rate;
  return `its pivotal commit rate read ${rate(a)} against ${rate(b)} (leave-one-out per branch, from ${pivotalCommits(rule)} and ${pivotalCommits(naive)} pivotal commits, no interval)`;
}

// ---- the founding note's predictions ----

function predictionsSentence(ps: readonly Prediction[]): string | null {
  if (ps.length === 0) return null;
  const groups: [string, Prediction["outcome"]][] = [
    ["The founding note's predictions that held", "held"],
    ["Did not hold", "did not hold"],
    ["Not shown by this run", NOT_SHOWN],
    ["Not measured", "not measured"],
  ];
  const out = groups.flatMap(([label, o]) => {
    const xs = ps
      .filter((p) => p.outcome === o)
      .map((p) =>
        p.why === "" || (o === "held" && p.whyWhenHeld !== true) ? p.claim : `${p.claim} (${p.why})`,
      );
    return xs.length === 0 ? [] : [`**${label}:** ${xs.join("; ")}.`];
  });
  return out.join(" ");
}
