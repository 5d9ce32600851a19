import { describe, expect, it } from "vitest";
import type { ReportView } from "../../src/testbed/report-view.js";
import { leadOf, pairedOf, verdict } from "../../src/testbed/verdict.js";
import { d, group, report, stats } from "./crafted-report.js";

const prediction = (r: ReportView, key: string) => verdict(r).predictions.find((p) => p.key === key);

describe("verdict", () => {
  it("names the leader of each coordinator with its paired lead over the runner-up, and says where it is shown", () => {
    const v = verdict(report());
    expect(v.text).toContain(
      "p99-boundary leads at coord-90ms (90 ms) by 5.0 over always-sync (95% interval 0.0 to 10.0: not shown by this run)",
    );
    expect(v.text).toContain(
      "never leads at coord-20ms (20 ms) by 14.0 over p99-boundary (95% interval 9.0 to 19.0)",
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
      /^On net value per fan-out at the scenario's weights \(correct answer 100, latency 0.2\/ms, wasted work 0.5\/ms, miss 50\), always-sync leads at every coordinator: /,
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
    expect(v.text).toContain("its pivotal commit rate read 0.021 against 0.013 (leave-one-out");
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

  it("says plainly, with naive-p50's intervals, that the rule has no decision-relevant commit rate when it committed no speculative fan-out", () => {
    const r = report();
    const none = report({
      policies: {
        ...r.policies,
        "p99-boundary": stats({ fanouts: 160, fanout_decision_relevant_commit_rate: null }),
      },
      seed_observation: {
        "naive-p50": {
          "coord-90ms": {
            would_flip_share_of_abandoned: { value: 0.8, lo95: 0.38, hi95: 0.96, n: 5 },
            decision_relevant_share_of_committed: { value: 0, lo95: 0, hi95: 0.107, n: 32 },
          },
        },
      },
    });
    const p = prediction(none, "rule_higher_decision_relevant_commit_rate");
    expect(p).toMatchObject({ outcome: "not measured", why: "the rule committed no speculative fan-out" });
    expect(verdict(none).text).toContain(
      "the rule speculated on none of its 160 fan-outs — it speculates only where the budget exceeds its fan-out p99 estimate plus the abandon cost — so it has no fan-out-level decision-relevant commit rate to compare; naive-p50's, per committed speculative fan-out: coord-90ms 0.000 (95% interval 0.000 to 0.107) of 32",
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
    // a run in which naive-p50 abandoned nothing there says so, not that the report cannot count it
    const none = report({
      seed_observation: {
        "naive-p50": {
          "coord-90ms": {
            would_flip_share_of_abandoned: { value: null, lo95: null, hi95: null, n: 0 },
            decision_relevant_share_of_committed: { value: 0.1, lo95: 0.02, hi95: 0.3, n: 23 },
          },
        },
      },
    });
    expect(prediction(none, "naive_abandoned_would_flip")).toMatchObject({
      outcome: "not measured",
      why: "naive-p50 abandoned none of its 0 speculative fan-outs at coord-90ms in this run",
    });
    expect(p?.evidence).toContain(
      "at coord-90ms: 0.800 (95% interval 0.600 to 0.950) of abandoned speculative fan-outs would have flipped",
    );
  });

  it("checks the per-instance boundary against the measured fan-out p50 and p99", () => {
    const r = report();
    expect(prediction(r, "rule_no_speculation_below_p99")?.outcome).toBe("held");
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
    const p = prediction(spec90, "rule_no_speculation_below_p99");
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
    expect(v.text).toContain("p99-boundary leads with +27.0");
    expect(v.text).toContain("this report.json carries no intervals");
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

describe("the targets at the seed's coordinator", () => {
  const withTargets = (
    p99Ms: number,
    lowerBound: number,
    ruleMisses: number,
    neverMisses: number,
  ): ReportView => {
    const r = report();
    const by = structuredClone(r.by_coordinator) as Record<string, Record<string, ReturnType<typeof stats>>>;
    by["p99-boundary"]!["coord-90ms"] = stats({ fanouts: 50, deadline_misses: ruleMisses });
    by.never!["coord-90ms"] = stats({ fanouts: 50, deadline_misses: neverMisses });
    return {
      ...r,
      by_coordinator: by,
      measured: {
        ...r.measured,
        coordinator_estimates: {
          "coord-90ms": {
            p50_ms: 30,
            p99_ms: p99Ms,
            p50_lower_bound_share: 0,
            p99_lower_bound_share: lowerBound,
          },
        },
      },
    };
  };

  it("says plainly when the p99 estimate is outside 0.5–2× the measured p99, and a lower bound", () => {
    const text = verdict(withTargets(135, 0.8, 4, 7)).text;
    expect(text).toContain(
      "At coord-90ms (90 ms, between the measured fan-out p50 and p99), its p99 estimate (median over its decisions) was 135 ms, a lower bound on 80% of its decisions, 0.45× the measured fan-out p99 of 300 ms: outside the 0.5–2× it should be within",
    );
    expect(text).toContain(
      "the rule missed 8% of deadlines there against never's 14% (the machine's floor): within 2 points",
    );
  });

  it("and when both targets held, or the rule missed more than 2 points above never", () => {
    const held = verdict(withTargets(400, 0, 2, 1)).text;
    expect(held).toContain("1.33× the measured fan-out p99 of 300 ms: within 0.5–2×");
    expect(held).toContain("within 2 points");
    expect(verdict(withTargets(400, 0, 10, 1)).text).toContain("more than 2 points above it");
  });

  it("sets the ratio against the measured p99's interval, and says when the interval has no upper end", () => {
    const base = withTargets(135, 0.8, 4, 7);
    const both: ReportView = {
      ...base,
      measured: { ...base.measured, fanout_p99_interval_ms: { lo: 150, hi: 450 } },
    };
    expect(verdict(both).text).toContain(
      "0.45× the measured fan-out p99 of 300 ms (0.30–0.90× against its 95% interval 150 ms to 450 ms): outside",
    );
    const open: ReportView = {
      ...base,
      measured: { ...base.measured, fanout_p99_interval_ms: { lo: 150, hi: null } },
    };
    expect(verdict(open).text).toContain(
      "0.45× the measured fan-out p99 of 300 ms (at most 0.90× against its 95% interval 150 ms to beyond the largest of 60 fan-outs): outside",
    );
  });

  it("says nothing of them when no budget lies between the measured p50 and p99", () => {
    const r = withTargets(135, 0.8, 4, 7);
    expect(verdict({ ...r, measured: { ...r.measured, fanout_p50_ms: 95 } }).text).not.toContain(
      "its p99 estimate",
    );
  });
});
