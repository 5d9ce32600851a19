import { describe, expect, it } from "vitest";
import type { NetValueGroup, NetValueSummary } from "../../src/testbed/net-value-intervals.js";
import type { PairedDifference } from "../../src/testbed/paired-difference.js";
import type { PolicyStats } from "../../src/testbed/policy-stats.js";
import { renderReportView } from "../../src/testbed/report-html.js";
import type { ReportView, StatsView } from "../../src/testbed/report-view.js";
import { leadOf, pairedOf, verdict } from "../../src/testbed/verdict.js";

const POLICIES = ["naive-p50", "p99-boundary", "always-sync", "never"] as const;
const COORDS = { "coord-90ms": 90, "coord-800ms": 800, "coord-20ms": 20 } as const;

function stats(over: Partial<StatsView> = {}): StatsView {
  const base: PolicyStats = {
    fanouts: 60,
    speculative_branches: 0,
    commit_rate: null,
    commits_per_fanout: 0,
    decision_relevant_commit_rate: null,
    info_gain_per_committed_branch: null,
    abandon_cost_ms_per_fanout: 0,
    deadline_misses: 0,
    accuracy: 0.9,
    net_value_per_fanout: 50,
    mode_mix: { speculate: 0, synchronous: 1, degrade: 0, error: 0 },
    speculative_fanouts: 0,
    speculation_commit_rate: null,
    abandoned_branches: 0,
    high_value_lost_per_fanout: 0,
    high_value_share_of_lost: null,
    late_lost_work_ms_per_fanout: 0,
    overlap_ms_per_fanout: 0,
    completion_ms_mean: 100,
    accuracy_during_events: null,
    errors: 0,
  };
  return { ...base, ...over };
}

const d = (mean: number, lo95: number, hi95: number, pairs = 60): PairedDifference => ({
  pairs,
  mean,
  lo95,
  hi95,
});

/** A group where each policy has the given mean, and every pair a − b the given difference (or a − b ± 5). */
function group(
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

function report(over: Partial<ReportView> = {}): ReportView {
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
        decision_relevant_commit_rate: 0.013,
        abandon_cost_ms_per_fanout: 290,
        net_value_per_fanout: 8,
      }),
      "p99-boundary": stats({
        commit_rate: 0.73,
        speculation_commit_rate: 0.9,
        commits_per_fanout: 5,
        decision_relevant_commit_rate: 0.021,
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

const prediction = (r: ReportView, key: string) => verdict(r).predictions.find((p) => p.key === key);

describe("verdict", () => {
  it("names the leader of each coordinator with its paired lead over the runner-up, and says where it is shown", () => {
    const v = verdict(report());
    expect(v.text).toContain(
      "p99-boundary leads on net value per fan-out at coord-90ms (90 ms) by 5.0 over always-sync (95% interval 0.0 to 10.0: not shown by this run)",
    );
    expect(v.text).toContain(
      "never leads on net value per fan-out at coord-20ms (20 ms) by 14.0 over p99-boundary (95% interval 9.0 to 19.0)",
    );
    expect(v.text).not.toContain("over p99-boundary (95% interval 9.0 to 19.0: not shown");
    expect(v.text).toContain(
      "over all coordinators p99-boundary leads by 14.0 over never (95% interval 9.0 to 19.0)",
    );
  });

  it("merges the clauses when one policy leads everywhere", () => {
    const r = report();
    const groups = Object.fromEntries(
      Object.entries(r.net_value!.groups).map(([k, g]) => [
        k,
        group(g.budget_ms, { "naive-p50": 0, "p99-boundary": 10, "always-sync": 70, never: 60 }),
      ]),
    );
    const v = verdict({ ...r, net_value: { ...r.net_value!, groups } });
    expect(v.text).toMatch(
      /^always-sync leads on net value per fan-out at every coordinator \(at the scenario's weights/,
    );
    expect(v.text).toContain("at coord-20ms (20 ms) by 10.0 over never (95% interval 5.0 to 15.0)");
  });

  it("explains a leader other than the rule by the value model's terms", () => {
    const r = report();
    const groups = {
      ...r.net_value!.groups,
      all: group(null, { "naive-p50": 8, "p99-boundary": 27, "always-sync": 12, never: 40 }),
    };
    const policies = {
      ...r.policies,
      never: stats({ net_value_per_fanout: 40, completion_ms_mean: 30 }),
      "p99-boundary": stats({
        ...r.policies["p99-boundary"],
        completion_ms_mean: 95,
        abandon_cost_ms_per_fanout: 0,
      }),
    };
    const v = verdict({ ...r, policies, net_value: { ...r.net_value!, groups } });
    // latency: 0.2/ms × (95 − 30) ms = 13.0
    expect(v.text).toContain(
      "Of never's 13.0 over the rule, 13.0 is latency (30.0 ms against 95.0 ms from request to done)",
    );
    expect(v.text).toContain("the prior was right on 86% of requests");
  });

  it("states what the rule changed against naive-p50, each change with its interval in the same direction", () => {
    const v = verdict(report());
    expect(v.text).toContain(
      "Against naive-p50 on the same 160 requests the rule made 9.0 fewer speculative commits per fan-out (95% interval 6.9 to 11.2)",
    );
    expect(v.text).toContain(
      "lost 127 ms less work to abandoned branches per fan-out (95% interval 84 to 170)",
    );
    expect(v.text).toContain("gained 19.0 in net value per fan-out (95% interval 4.0 to 34.0)");
    expect(v.text).toContain("its decision-relevant commit rate read 0.021 against 0.013 (leave-one-out");
  });

  it("says 'not shown by this run' where an interval covers 0, and 'did not hold' where it excludes the prediction", () => {
    const covers = report({
      rule_vs_naive: { ...report().rule_vs_naive!, net_value_per_fanout: d(-4.4, -27.7, 18.9, 31) },
    });
    expect(prediction(covers, "rule_net_value_above_naive")?.outcome).toBe("not shown by this run");
    const v = verdict(covers);
    expect(v.text).toContain(
      "differed by -4.4 in net value per fan-out (95% interval -27.7 to 18.9: not shown by this run)",
    );
    expect(v.text).toMatch(
      /Not shown by this run: [^.]*the rule ahead of naive-p50 on net value \(its interval covers 0\)/,
    );

    const below = report({
      rule_vs_naive: { ...report().rule_vs_naive!, net_value_per_fanout: d(-12, -20, -4) },
    });
    expect(prediction(below, "rule_net_value_above_naive")?.outcome).toBe("did not hold");
    expect(verdict(below).text).toMatch(/Did not hold: [^.]*the rule ahead of naive-p50 on net value/);
    expect(prediction(below, "rule_fewer_commits_per_fanout")?.outcome).toBe("held");
  });

  it("never claims the inversion without an interval, and judges it on the fan-out-level interval where the report has one", () => {
    expect(prediction(report(), "rule_higher_decision_relevant_commit_rate")?.outcome).toBe(
      "not shown by this run",
    );
    const r = report();
    const withFan = report({
      policies: {
        ...r.policies,
        "p99-boundary": { ...r.policies["p99-boundary"]!, fanout_decision_relevant_commit_rate: 0.3 },
        "naive-p50": { ...r.policies["naive-p50"]!, fanout_decision_relevant_commit_rate: 0.1 },
      },
      rule_vs_naive: { ...r.rule_vs_naive!, fanout_decision_relevant_commit_rate: d(0.2, 0.08, 0.32) },
    });
    expect(prediction(withFan, "rule_higher_decision_relevant_commit_rate")?.outcome).toBe("held");
    expect(verdict(withFan).text).toContain(
      "its fan-out-level decision-relevant commit rate was 0.300 against 0.100, a difference of 0.200 (95% interval 0.080 to 0.320)",
    );
  });

  it("judges the note's central observation on the would-flip share when the report carries it", () => {
    expect(prediction(report(), "naive_abandoned_would_flip")?.outcome).toBe("not measured");
    const r = report({
      seed_observation: {
        "naive-p50": {
          "coord-90ms": {
            would_flip_share_of_abandoned: { value: 0.8, lo95: 0.6, hi95: 0.95, n: 20 },
            decision_relevant_share_of_committed: { value: 0.05, lo95: 0.01, hi95: 0.12, n: 40 },
          },
        },
      },
    });
    const p = prediction(r, "naive_abandoned_would_flip");
    expect(p?.outcome).toBe("held");
    expect(p?.evidence).toContain(
      "at coord-90ms: 0.800 (95% interval 0.600 to 0.950) of abandoned speculative fan-outs would have flipped",
    );
  });

  it("checks the per-instance boundary against the measured fan-out p50 and p99", () => {
    const r = report();
    expect(prediction(r, "rule_speculates_only_above_p99")?.outcome).toBe("held");
    expect(prediction(r, "rule_degrades_below_p50")?.outcome).toBe("held");
    const spec90 = report({
      by_coordinator: {
        ...r.by_coordinator,
        "p99-boundary": {
          ...r.by_coordinator["p99-boundary"],
          "coord-90ms": stats({ mode_mix: { speculate: 0.18, synchronous: 0.82, degrade: 0, error: 0 } }),
          "coord-20ms": stats({ mode_mix: { speculate: 0, synchronous: 0.6, degrade: 0.4, error: 0 } }),
        },
      },
    });
    const p = prediction(spec90, "rule_speculates_only_above_p99");
    expect(p?.outcome).toBe("did not hold");
    expect(p?.evidence).toContain(
      "coord-20ms and coord-90ms, at or below the measured fan-out p99 of 300 ms, speculated on 0% and 18%",
    );
    expect(prediction(spec90, "rule_degrades_below_p50")?.outcome).toBe("did not hold");
    expect(verdict(spec90).text).toMatch(/Did not hold: .*degraded on 40% of the requests it answered/);
  });

  it("degrades gracefully on a report.json without the newer sections", () => {
    const old = report({ net_value: undefined, failures: undefined });
    const v = verdict(old);
    expect(v.text).toContain("p99-boundary leads on net value per fan-out with +27.0");
    expect(v.text).toContain("this report.json carries no intervals");
    const html = renderReportView(old, "text");
    expect(html).toContain("This report.json has no net_value section.");
    expect(html).toContain("This report.json has no per-peer summary");
  });

  it("says so when the run was interrupted", () => {
    expect(verdict(report({ interrupted: true })).text).toMatch(/^This run was interrupted after 60 s/);
  });

  it("gives the same words in text and HTML", () => {
    const v = verdict(report());
    expect(v.html).toContain("<strong>");
    const plain = v.html
      .replace(/<\/?strong>/g, "")
      .replace(
        /&#39;|&quot;|&amp;|&lt;|&gt;/g,
        (e) => ({ "&#39;": "'", "&quot;": '"', "&amp;": "&", "&lt;": "<", "&gt;": ">" })[e]!,
      );
    expect(plain).toBe(v.text);
  });
});

describe("leadOf / pairedOf", () => {
  it("reads a pair stored in either order, flipping the interval for b − a", () => {
    const g = group(90, { "naive-p50": 10, never: 30 }, { "naive-p50|never": d(-20, -26, -14) });
    expect(pairedOf(g, "never", "naive-p50")).toEqual({ pairs: 60, mean: 20, lo95: 14, hi95: 26 });
    expect(leadOf(g)).toMatchObject({ best: "never", next: "naive-p50", diff: { mean: 20, lo95: 14 } });
  });
});
