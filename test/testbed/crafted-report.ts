/** A small report.json-shaped object for the verdict's and the page's unit tests. */
import type { NetValueGroup, NetValueSummary } from "../../src/testbed/net-value-intervals.js";
import type { PairedDifference } from "../../src/testbed/paired-difference.js";
import type { PolicyStats } from "../../src/testbed/policy-stats.js";
import type { ReportView, StatsView } from "../../src/testbed/report-view.js";

export const POLICIES = ["naive-p50", "p99-boundary", "always-sync", "never"] as const;
export const COORDS = { "coord-90ms": 90, "coord-800ms": 800, "coord-20ms": 20 } as const;

export function stats(over: Partial<StatsView> = {}): StatsView {
  const base: PolicyStats = {
    fanouts: 60,
    speculative_branches: 0,
    commit_rate: null,
    commits_per_fanout: 0,
    fanout_decision_relevant_commit_rate: null,
    pivotal_commit_rate: null,
    info_gain_per_committed_branch: null,
    abandon_cost_ms_per_fanout: 0,
    deadline_misses: 0,
    accuracy: 0.9,
    net_value_per_fanout: 50,
    mode_mix: { speculate: 0, synchronous: 1, degrade: 0, error: 0 },
    speculative_fanouts: 0,
    speculation_commit_rate: null,
    abandoned_branches: 0,
    would_flip_share_of_abandoned: null,
    pivotal_cut_per_fanout: 0,
    pivotal_share_of_cut: null,
    late_lost_work_ms_per_fanout: 0,
    peer_work_used_ms_per_fanout: 0,
    peer_work_cut_ms_per_fanout: 0,
    peer_work_redundant_ms_per_fanout: 0,
    thrown_ms_per_fanout: 0,
    abandon_cost_estimate_ms: null,
    overlap_ms_per_fanout: 0,
    completion_ms_mean: 100,
    accuracy_during_events: null,
    errors: 0,
  };
  return { ...base, ...over };
}

export const d = (mean: number, lo95: number, hi95: number, pairs = 60): PairedDifference => ({
  pairs,
  mean,
  lo95,
  hi95,
});

/** A group where each policy has the given mean, and every pair a − b the given difference (or a − b ± 5). */
export function group(
  budget: number | null,
  means: Partial<Record<(typeof POLICIES)[number], number>>,
  diffs: Record<string, PairedDifference> = {},
): NetValueGroup {
  const names = Object.keys(means) as (typeof POLICIES)[number][];
  const paired = names.flatMap((a, i) =>
    names.slice(i + 1).map((b) => {
      const given = diffs[`${a}|${b}`];
      const m = means[a]! - means[b]!;
      return { a, b, diff: given ?? d(m, m - 5, m + 5) };
    }),
  );
  const policies = Object.fromEntries(
    names.map((p) => [p, { n: 60, mean: means[p]!, lo95: means[p]! - 4, hi95: means[p]! + 4 }]),
  );
  return { budget_ms: budget, policies, paired };
}

export function report(over: Partial<ReportView> = {}): ReportView {
  const byCoordinator = (mix: Record<string, Record<string, number>>): ReportView["by_coordinator"] =>
    Object.fromEntries(
      POLICIES.map((p) => [
        p,
        Object.fromEntries(
          Object.keys(COORDS).map((c) => [
            c,
            stats({
              mode_mix: { speculate: 0, synchronous: 1, degrade: 0, error: 0, ...(mix[`${p}|${c}`] ?? {}) },
            }),
          ]),
        ),
      ]),
    );
  const netValue: NetValueSummary = {
    weights: { correct: 100, latencyPerMs: 0.2, abandonPerMs: 0.5, miss: 50 },
    groups: {
      "coord-90ms": group(90, { "naive-p50": -20, "p99-boundary": 30, "always-sync": 25, never: 10 }),
      "coord-800ms": group(800, { "naive-p50": 40, "p99-boundary": 45, "always-sync": 41, never: 10 }),
      "coord-20ms": group(20, { "naive-p50": 5, "p99-boundary": 6, "always-sync": -30, never: 20 }),
      all: group(null, { "naive-p50": 8, "p99-boundary": 27, "always-sync": 12, never: 13 }),
    },
  };
  return {
    scenario: "crafted",
    seed: 1,
    duration_s: 60,
    interrupted: false,
    measured: {
      fanout_p50_ms: 40,
      fanout_p99_ms: 300,
      fanout_samples: 60,
      fanout_censored: 0,
      event_share: 0.14,
      coordinator_estimates: {},
    },
    policies: {
      "naive-p50": stats({
        commit_rate: 0.68,
        speculation_commit_rate: 0.7,
        commits_per_fanout: 14,
        pivotal_commit_rate: 0.013,
        abandon_cost_ms_per_fanout: 290,
        net_value_per_fanout: 8,
      }),
      "p99-boundary": stats({
        commit_rate: 0.73,
        speculation_commit_rate: 0.9,
        commits_per_fanout: 5,
        pivotal_commit_rate: 0.021,
        abandon_cost_ms_per_fanout: 110,
        net_value_per_fanout: 27,
      }),
      "always-sync": stats({ net_value_per_fanout: 12 }),
      never: stats({ net_value_per_fanout: 13 }),
    },
    by_coordinator: byCoordinator({
      "p99-boundary|coord-800ms": { speculate: 0.6, synchronous: 0.4 },
      "p99-boundary|coord-20ms": { synchronous: 0, degrade: 0.95, error: 0.05 },
      "naive-p50|coord-90ms": { speculate: 0.75, synchronous: 0.25 },
    }),
    value_model: {
      continuationMs: 30,
      weights: { correct: 100, latencyPerMs: 0.2, abandonPerMs: 0.5, miss: 50 },
      grid: { correct: [100], latencyPerMs: [0.2], abandonPerMs: [0.5], miss: [50] },
    },
    rule_vs_naive: {
      pairs: 160,
      commits_per_fanout: d(-9, -11.2, -6.9, 160),
      abandon_cost_ms_per_fanout: d(-127, -170, -84, 160),
      net_value_per_fanout: d(19, 4, 34, 160),
    },
    net_value: netValue,
    sensitivity: [
      {
        weights: { correct: 100, latencyPerMs: 0.2, abandonPerMs: 0.5, miss: 50 },
        net_value_per_fanout: { "naive-p50": 8, "p99-boundary": 27, "always-sync": 12, never: 13 },
        best: ["p99-boundary"],
        rule_minus_naive: d(19, 4, 34, 160),
      },
    ],
    checks: {},
    series: {
      bucket_s: 10,
      budgets: { ...COORDS },
      peer_latency: {},
      mode_mix: {},
      speculate_by_coordinator: {},
    },
    ...over,
  };
}
