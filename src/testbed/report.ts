/**
 * report.json: the scenario, what was measured, the per-policy fields (policy-stats.ts), the same per
 * coordinator, the sensitivity grid, the checks the founding note predicts (evaluated on the measured numbers,
 * never forced) and the series the HTML charts draw.
 */
import { nearestRank } from "../util/nearest-rank.js";
import { quantileInterval } from "./quantile-interval.js";
import type { PolicyName } from "../policy/types.js";
import { median, policyStats } from "./policy-stats.js";
import type { PolicyStats } from "./policy-stats.js";
import type { CallRecord, MeasureRecord } from "./records.js";
import type { Scenario } from "./scenario-types.js";
import { scoreCall } from "./score-call.js";
import type { ScoreContext, ScoredCall } from "./score-call.js";
import type { LoopDelaySummary } from "./coordinator-loop-poll.js";
import { pairCalls, pairedDifference, pairedRatioDifference } from "./paired-difference.js";
import { seedObservation } from "./seed-observation.js";
import type { SeedObservation } from "./seed-observation.js";
import type { PairedDifference } from "./paired-difference.js";
import { netValue, round, sensitivity } from "./value-model.js";
import { netValueSummary } from "./net-value-intervals.js";
import type { NetValueSummary } from "./net-value-intervals.js";
import { failureCodes } from "./failure-codes.js";
import type { FailureCodes } from "./failure-codes.js";
import { deadlineMisses } from "./deadline-misses.js";
import type { DeadlineMisses } from "./deadline-misses.js";
import type { SensitivityRow } from "./value-model.js";

export interface ProcessSummary {
  readonly peers: number;
  /** Coordinator nodes: one per scenario coordinator, serving every policy. */
  readonly coordinators: number;
  /** OS processes the nodes ran in (`tailswarm host` groups several nodes in one). */
  readonly node_processes?: number;
  /** "grouped" (one process per region's peers and per coordinator) or "per-node". */
  readonly layout?: string;
  /**
   * CPU seconds the node processes used during the measured run (null where /proc is unreadable),
   * and the machine's cores: cpu_s_measured / (duration × cores) is the share of the machine the
   * swarm itself took, which shows in its latencies as CPU queueing the scenario does not model.
   */
  readonly cpu_s_measured?: number | null;
  readonly cores?: number;
  /** Spawn to first answered Probe, ms: slowest node, and all nodes ready. */
  readonly startup_ms_max: number;
  readonly startup_ms_all: number;
  readonly crashed: readonly string[];
  readonly killed_after_grace: readonly string[];
  readonly left_running: readonly string[];
}

export interface Report {
  readonly scenario: string;
  readonly seed: number;
  readonly started_at: string;
  readonly duration_s: number;
  readonly interrupted: boolean;
  readonly processes: ProcessSummary | null;
  /** Event-loop delay of the testbed process while measuring: how late its own timers and replies ran. */
  readonly testbed_event_loop_delay_ms: ReportInput["loopDelayMs"];
  /**
   * Each coordinator node's event-loop delay during the measured run (median p50, largest p99 and max of
   * its status readings): a loop this late misses deadlines whatever the policy decides.
   */
  readonly coordinator_event_loop_delay_ms: Readonly<Record<string, LoopDelaySummary>>;
  readonly measured: {
    readonly fanout_p50_ms: number;
    readonly fanout_p99_ms: number;
    /**
     * The 95% distribution-free interval of the fan-out p99 from its samples (`quantileInterval`): null
     * ends are ones the samples cannot bound (with fewer than 368 fan-outs, the upper one).
     */
    readonly fanout_p99_interval_ms: { readonly lo: number | null; readonly hi: number | null };
    readonly fanout_samples: number;
    readonly fanout_censored: number;
    /** Share of requests sent while a gateway episode (the event) was in progress. */
    readonly event_share: number | null;
    /** The coordinators' own fan-out estimates (median over their replies). */
    readonly coordinator_estimates: Record<
      string,
      {
        readonly p50_ms: number | null;
        readonly p99_ms: number | null;
        /** Share of the coordinator's decisions whose p50/p99 were its fan-outs' observed completion times. */
        readonly observed_share: number | null;
        /**
         * Share of the coordinator's decisions whose p50 / p99 was only a lower bound (censored beyond the
         * horizon: the true quantile is at least the number), over those that said; null when none did.
         */
        readonly p50_lower_bound_share: number | null;
        readonly p99_lower_bound_share: number | null;
      }
    >;
  };
  readonly policies: Record<string, PolicyStats>;
  readonly by_coordinator: Record<string, Record<string, PolicyStats>>;
  readonly value_model: Scenario["valueModel"];
  /**
   * The rule against naive-p50 on the same requests (p99-boundary − naive-p50 per request: mean and
   * 95% interval), at the scenario's weights; null when either policy was not run.
   */
  readonly rule_vs_naive: RuleVsNaive | null;
  /** Net value per fan-out per coordinator: each policy's mean with its interval, every pair compared. */
  readonly net_value: NetValueSummary;
  /** Why calls failed at the caller (mode `error`): gRPC status names per policy and coordinator. */
  readonly failures: FailureCodes;
  /** Deadline misses per policy and coordinator, by mode, each missed call with where its time went. */
  readonly deadline_misses: Record<string, Record<string, DeadlineMisses>>;
  /** Each row also carries `rule_minus_naive`: the paired net value difference at its weights. */
  readonly sensitivity: readonly (SensitivityRow & { readonly rule_minus_naive: PairedDifference | null })[];
  /**
   * The founding note's observation per policy and coordinator (seed-observation.ts), and the rule
   * against naive-p50 on it per coordinator (paired bootstrap on the same requests).
   */
  readonly seed_observation: Record<string, Record<string, SeedObservation>>;
  readonly seed_observation_rule_vs_naive: Record<string, SeedObservationDifference>;
  readonly checks: Record<string, boolean | null>;
  readonly series: ReportSeries;
}

export interface RuleVsNaive {
  readonly pairs: number;
  readonly commits_per_fanout: PairedDifference | null;
  readonly abandon_cost_ms_per_fanout: PairedDifference | null;
  readonly net_value_per_fanout: PairedDifference | null;
  /** Fan-out-level decision-relevant commit rate, rule − naive-p50 (paired bootstrap). */
  readonly fanout_decision_relevant_commit_rate: PairedDifference | null;
}

export interface SeedObservationDifference {
  readonly speculative_fanout_commit_rate: PairedDifference | null;
  readonly decision_relevant_share_of_committed: PairedDifference | null;
  readonly would_flip_share_of_abandoned: PairedDifference | null;
}

export interface ReportSeries {
  /** Bucket width, s: wide enough for about ten fan-outs per coordinator and policy in each. */
  readonly bucket_s: number;
  readonly budgets: Record<string, number>;
  /** Per peer: [t_s, p50, p99] per bucket, from every branch the coordinators issued. */
  readonly peer_latency: Record<
    string,
    { readonly group: string; readonly points: [number, number, number][] }
  >;
  /** Per peer group (region, or region behind a gateway): [t_s, p50, p99, branches] per bucket. */
  readonly group_latency?: Record<string, [number, number, number, number][]>;
  /** Per peer over the whole run, from every branch the coordinators issued. */
  readonly peer_summary?: Record<string, PeerSummary>;
  /** Per policy: [t_s, speculate, synchronous, degrade, error] shares per bucket. */
  readonly mode_mix: Record<string, [number, number, number, number, number][]>;
  /** Per policy and coordinator: [t_s, speculate share] per bucket. */
  readonly speculate_by_coordinator: Record<string, Record<string, [number, number][]>>;
}

export interface PeerSummary {
  readonly group: string;
  readonly branches: number;
  /** Branches cut off before they answered (abandoned, late or failed): their latency is their age. */
  readonly cut: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /**
   * More than 1% of the peer's branches were cut off, so the p99 falls among them: the true p99 is
   * at least `p99_ms`.
   */
  readonly p99_lower_bound: boolean;
}

export interface ReportInput {
  readonly scenario: Scenario;
  readonly startedAt: Date;
  readonly durationS: number;
  readonly interrupted: boolean;
  readonly calls: readonly CallRecord[];
  readonly measures: readonly MeasureRecord[];
  readonly processes: ProcessSummary | null;
  /** Event-loop delay of the testbed process during the measured run (its own timing error), ms. */
  readonly loopDelayMs: {
    readonly p50: number | null;
    readonly p99: number | null;
    readonly max: number | null;
  };
  /** Each coordinator's own event-loop delay over the measured run (from its status), ms. */
  readonly coordinatorLoopDelayMs?: Readonly<Record<string, LoopDelaySummary>>;
  readonly score: ScoreContext;
  readonly peerGroups: ReadonlyMap<string, string>;
}

export function buildReport(input: ReportInput): Report {
  const s = input.scenario;
  const policies = s.policies;
  const scored = input.calls.map((c) => scoreCall(c, input.score));
  const byPolicy = new Map<string, ScoredCall[]>(policies.map((p) => [p, []]));
  for (const c of scored) byPolicy.get(c.policy)?.push(c);
  const weights = s.valueModel.weights;
  const rulePairs = pairCalls(byPolicy.get("p99-boundary") ?? [], byPolicy.get("naive-p50") ?? []);
  const hasBoth = byPolicy.has("p99-boundary") && byPolicy.has("naive-p50");
  const grid = sensitivity(byPolicy, s.valueModel).map((row) => ({
    ...row,
    rule_minus_naive: hasBoth ? pairedDifference(rulePairs, (c) => netValue(c, row.weights)) : null,
  }));
  const stats: Record<string, PolicyStats> = {};
  for (const [p, calls] of byPolicy) stats[p] = policyStats(calls, weights);
  const byCoord: Record<string, Record<string, PolicyStats>> = {};
  for (const [p, calls] of byPolicy) {
    byCoord[p] = {};
    for (const c of s.coordinators)
      byCoord[p][c.name] = policyStats(
        calls.filter((x) => x.coordinator === c.name),
        weights,
      );
  }
  const fan = input.measures.map((m) => m.fanoutMs).sort((a, b) => a - b);
  const firstPolicy = policies[0];
  const firstCalls = input.calls.filter((c) => c.policy === firstPolicy);
  const estimates: Report["measured"]["coordinator_estimates"] = {};
  for (const c of s.coordinators) {
    const rows = input.calls.filter((r) => r.coordinator === c.name && r.ok);
    estimates[c.name] = {
      p50_ms: median(rows.map((r) => r.fanoutP50Ms ?? NaN)),
      p99_ms: median(rows.map((r) => r.fanoutP99Ms ?? NaN)),
      observed_share:
        rows.length === 0
          ? null
          : round(rows.filter((r) => r.estimateBasis === "observed").length / rows.length, 3),
      p50_lower_bound_share: lowerBoundShare(rows.map((r) => r.fanoutP50Kind)),
      p99_lower_bound_share: lowerBoundShare(rows.map((r) => r.fanoutP99Kind)),
    };
  }
  return {
    scenario: s.name,
    seed: s.seed,
    started_at: input.startedAt.toISOString(),
    duration_s: round(input.durationS, 2),
    interrupted: input.interrupted,
    processes: input.processes,
    testbed_event_loop_delay_ms: {
      p50: input.loopDelayMs.p50 === null ? null : round(input.loopDelayMs.p50, 2),
      p99: input.loopDelayMs.p99 === null ? null : round(input.loopDelayMs.p99, 2),
      max: input.loopDelayMs.max === null ? null : round(input.loopDelayMs.max, 2),
    },
    coordinator_event_loop_delay_ms: input.coordinatorLoopDelayMs ?? {},
    measured: {
      fanout_p50_ms: round(nearestRank(fan, 0.5) ?? NaN, 2),
      fanout_p99_ms: round(nearestRank(fan, 0.99) ?? NaN, 2),
      fanout_p99_interval_ms: p99Interval(input.measures),
      fanout_samples: fan.length,
      fanout_censored: input.measures.filter((m) => m.censored).length,
      event_share:
        firstCalls.length === 0
          ? null
          : round(firstCalls.filter((c) => c.event).length / firstCalls.length, 4),
      coordinator_estimates: estimates,
    },
    policies: stats,
    by_coordinator: byCoord,
    value_model: s.valueModel,
    rule_vs_naive: hasBoth
      ? {
          pairs: rulePairs.length,
          commits_per_fanout: pairedDifference(rulePairs, (c) => c.committed),
          abandon_cost_ms_per_fanout: pairedDifference(rulePairs, (c) => c.abandonLostMs + c.thrownMs),
          net_value_per_fanout: pairedDifference(rulePairs, (c) => netValue(c, weights)),
          fanout_decision_relevant_commit_rate: pairedRatioDifference(
            rulePairs,
            (c) => (committedSpeculation(c) && c.decisionRelevant ? 1 : 0),
            (c) => (committedSpeculation(c) ? 1 : 0),
          ),
        }
      : null,
    net_value: netValueSummary(byPolicy, s.coordinators, weights),
    failures: failureCodes(input.calls),
    deadline_misses: deadlineMisses(input.calls),
    sensitivity: grid,
    seed_observation: Object.fromEntries(
      [...byPolicy].map(([p, calls]) => [
        p,
        Object.fromEntries(
          s.coordinators.map((c) => [c.name, seedObservation(calls.filter((x) => x.coordinator === c.name))]),
        ),
      ]),
    ),
    seed_observation_rule_vs_naive: hasBoth
      ? Object.fromEntries(
          s.coordinators.map((c) => [
            c.name,
            observationDifference(rulePairs.filter(([a]) => a.coordinator === c.name)),
          ]),
        )
      : {},
    checks: checks(stats, grid),
    series: buildSeries(input, scored),
  };
}

/** The founding note's predictions, evaluated on the measured numbers (null when a policy is missing). */
function checks(p: Record<string, PolicyStats>, grid: Report["sensitivity"]): Record<string, boolean | null> {
  const naive = p["naive-p50"];
  const rule = p["p99-boundary"];
  if (naive === undefined || rule === undefined) return {};
  const gt = (a: number | null, b: number | null): boolean | null =>
    a === null || b === null ? null : a > b;
  return {
    naive_commit_rate_near_71pct:
      naive.commit_rate === null ? null : Math.abs(naive.commit_rate - 0.71) <= 0.1,
    naive_speculation_commit_rate_near_71pct:
      naive.speculation_commit_rate === null ? null : Math.abs(naive.speculation_commit_rate - 0.71) <= 0.1,
    rule_fewer_commits_per_fanout: naive.commits_per_fanout > rule.commits_per_fanout,
    rule_higher_decision_relevant_commit_rate: gt(
      rule.fanout_decision_relevant_commit_rate,
      naive.fanout_decision_relevant_commit_rate,
    ),
    rule_lower_abandon_cost_per_fanout: rule.abandon_cost_ms_per_fanout < naive.abandon_cost_ms_per_fanout,
    rule_net_value_above_naive_everywhere_on_grid: grid.every(
      (g) =>
        (g.net_value_per_fanout["p99-boundary"] ?? -Infinity) >
        (g.net_value_per_fanout["naive-p50"] ?? Infinity),
    ),
    // What a short run can say of the grid: at no point is the rule measurably below naive-p50 (the
    // 95% interval of the paired difference reaches above zero). The point estimates above can
    // fall either way where the margin is small against the run's noise.
    rule_net_value_not_measurably_below_naive_on_grid: grid.every(
      (g) => g.rule_minus_naive === null || g.rule_minus_naive.hi95 > 0,
    ),
    rule_net_value_above_naive_at_default_weights: rule.net_value_per_fanout > naive.net_value_per_fanout,
  };
}

function committedSpeculation(c: ScoredCall): boolean {
  return c.mode === "speculate" && !c.speculationAbandoned;
}

function observationDifference(
  pairs: readonly (readonly [ScoredCall, ScoredCall])[],
): SeedObservationDifference {
  const spec = (c: ScoredCall): number => (c.mode === "speculate" ? 1 : 0);
  const committed = (c: ScoredCall): number => (committedSpeculation(c) ? 1 : 0);
  const abandoned = (c: ScoredCall): number => (c.mode === "speculate" && c.speculationAbandoned ? 1 : 0);
  return {
    speculative_fanout_commit_rate: pairedRatioDifference(pairs, committed, spec),
    decision_relevant_share_of_committed: pairedRatioDifference(
      pairs,
      (c) => committed(c) * (c.decisionRelevant ? 1 : 0),
      committed,
    ),
    would_flip_share_of_abandoned: pairedRatioDifference(
      pairs,
      (c) => abandoned(c) * (c.wouldFlip ? 1 : 0),
      abandoned,
    ),
  };
}

function buildSeries(input: ReportInput, scored: readonly ScoredCall[]): ReportSeries {
  const s = input.scenario;
  const span = Math.max(1, input.durationS);
  const bucket = bucketSeconds(span, Math.min(...s.coordinators.map((c) => c.ratePerS)));
  const nb = Math.max(1, Math.ceil(span / bucket));
  const idx = (tMs: number): number => Math.min(nb - 1, Math.max(0, Math.floor(tMs / 1000 / bucket)));
  const mid = (i: number): number => round((i + 0.5) * bucket, 2);

  const lat = new Map<string, number[][]>();
  const byGroup = new Map<string, number[][]>();
  const whole = new Map<string, { all: number[]; cut: number }>();
  const groupOf = (peer: string): string => input.peerGroups.get(peer) ?? "peer";
  for (const c of input.calls) {
    for (const b of c.branches) {
      let rows = lat.get(b.peer);
      if (rows === undefined) lat.set(b.peer, (rows = Array.from({ length: nb }, () => [])));
      rows[idx(c.t)]!.push(b.latencyMs);
      const g = groupOf(b.peer);
      let grows = byGroup.get(g);
      if (grows === undefined) byGroup.set(g, (grows = Array.from({ length: nb }, () => [])));
      grows[idx(c.t)]!.push(b.latencyMs);
      let w = whole.get(b.peer);
      if (w === undefined) whole.set(b.peer, (w = { all: [], cut: 0 }));
      w.all.push(b.latencyMs);
      if (CUT.has(b.outcome)) w.cut++;
    }
  }
  const groupLatency: NonNullable<ReportSeries["group_latency"]> = {};
  for (const [g, rows] of [...byGroup.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    groupLatency[g] = rows.flatMap((xs, i) => {
      if (xs.length === 0) return [];
      xs.sort((a, b) => a - b);
      return [[mid(i), round(nearestRank(xs, 0.5)!, 2), round(nearestRank(xs, 0.99)!, 2), xs.length]];
    });
  }
  const peerSummary: NonNullable<ReportSeries["peer_summary"]> = {};
  for (const [peer, w] of [...whole.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const xs = w.all.sort((a, b) => a - b);
    peerSummary[peer] = {
      group: groupOf(peer),
      branches: xs.length,
      cut: w.cut,
      p50_ms: round(nearestRank(xs, 0.5)!, 2),
      p99_ms: round(nearestRank(xs, 0.99)!, 2),
      p99_lower_bound: w.cut > xs.length - Math.ceil(0.99 * xs.length),
    };
  }
  const peerLatency: ReportSeries["peer_latency"] = {};
  for (const [peer, rows] of [...lat.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const points: [number, number, number][] = [];
    rows.forEach((xs, i) => {
      if (xs.length === 0) return;
      xs.sort((a, b) => a - b);
      points.push([mid(i), round(nearestRank(xs, 0.5)!, 2), round(nearestRank(xs, 0.99)!, 2)]);
    });
    peerLatency[peer] = { group: input.peerGroups.get(peer) ?? "peer", points };
  }

  const modeMix: ReportSeries["mode_mix"] = {};
  const specBy: ReportSeries["speculate_by_coordinator"] = {};
  for (const policy of s.policies) {
    const counts = Array.from({ length: nb }, () => [0, 0, 0, 0]);
    const per = new Map(
      s.coordinators.map((c) => [c.name, Array.from({ length: nb }, () => [0, 0])] as const),
    );
    for (const c of scored) {
      if (c.policy !== policy) continue;
      const i = idx(c.t);
      const k = ["speculate", "synchronous", "degrade", "error"].indexOf(c.mode);
      counts[i]![k]!++;
      const row = per.get(c.coordinator)?.[i];
      if (row !== undefined) {
        row[1]!++;
        if (c.mode === "speculate") row[0]!++;
      }
    }
    modeMix[policy] = counts.flatMap((xs, i) => {
      const n = xs.reduce((a, b) => a + b, 0);
      return n === 0
        ? []
        : [[mid(i), ...xs.map((x) => round(x / n, 3))] as [number, number, number, number, number]];
    });
    specBy[policy] = {};
    for (const [name, rows] of per) {
      specBy[policy][name] = rows.flatMap(([sp, n], i) =>
        n === 0 ? [] : [[mid(i), round(sp! / n!, 3)] as [number, number]],
      );
    }
  }
  return {
    bucket_s: bucket,
    budgets: Object.fromEntries(s.coordinators.map((c) => [c.name, c.budgetMs])),
    peer_latency: peerLatency,
    group_latency: groupLatency,
    peer_summary: peerSummary,
    mode_mix: modeMix,
    speculate_by_coordinator: specBy,
  };
}

/** Branch outcomes that did not answer: the recorded latency is the branch's age when it was cut. */
const CUT = new Set(["abandoned", "late", "failed"]);

/**
 * The narrowest of 2, 5, 10, 15, 20, 30, 60 s that holds about ten fan-outs of the slowest
 * coordinator per policy (fewer make a jagged line), no wider than half the run.
 */
export function bucketSeconds(spanS: number, minRatePerS: number): number {
  const widths = [2, 5, 10, 15, 20, 30, 60];
  const cap = Math.max(2, spanS / 2);
  const fits = widths.find((w) => w * minRatePerS >= 10) ?? widths[widths.length - 1]!;
  return Math.max(2, Math.min(fits, widths.filter((w) => w <= cap).pop() ?? 2));
}

/** Share of "lower-bound" among the kinds given (known, lower-bound; unknown estimates left out). */
function lowerBoundShare(kinds: readonly (string | undefined)[]): number | null {
  const said = kinds.filter((k) => k === "known" || k === "lower-bound");
  return said.length === 0 ? null : round(said.filter((k) => k === "lower-bound").length / said.length, 3);
}

export type { PolicyName };

/**
 * The measured p99's 95% interval, rounded like the other figures. A censored fan-out (a branch still out
 * when the measure gave up) is only known to be longer: it ranks last, and an end that falls on one is null.
 */
function p99Interval(
  measures: readonly { readonly fanoutMs: number; readonly censored: boolean }[],
): Report["measured"]["fanout_p99_interval_ms"] {
  const sorted = measures.map((m) => (m.censored ? Infinity : m.fanoutMs)).sort((a, b) => a - b);
  const i = quantileInterval(sorted, 0.99, 0.95);
  const end = (ms: number | null): number | null =>
    ms === null || !Number.isFinite(ms) ? null : round(ms, 2);
  return { lo: end(i.loMs), hi: end(i.hiMs) };
}
