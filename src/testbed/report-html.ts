/**
 * report.html: one self-contained page (inline SVG, no scripts, no network) with the terminal table,
 * per-peer p50/p99 over time against each coordinator's budget, the mode mix over time, and commit
 * rate against decision-relevant commit rate per policy.
 */
import { lineChart } from "../sim/svg-chart.js";
import { esc } from "../util/svg.js";
import { groupedBarChart, manyLinesChart } from "./charts.js";
import type { Report } from "./report.js";
import { formatTable } from "./report-table.js";

export function renderHtml(r: Report): string {
  const budgets = Object.entries(r.series.budgets).map(([c, b]) => ({ y: b, label: `${c} budget ${b} ms` }));
  const peers = Object.entries(r.series.peer_latency);
  const p99 = manyLinesChart({
    title: "Per-peer p99 latency over time (branches of every coordinator)",
    xLabel: "time (s)",
    yLabel: "p99 (ms)",
    yLog: true,
    lines: peers.map(([, v]) => ({ group: v.group, points: v.points.map(([t, , q]) => [t, q] as const) })),
    hLines: budgets,
  });
  const p50 = manyLinesChart({
    title: "Per-peer p50 latency over time",
    xLabel: "time (s)",
    yLabel: "p50 (ms)",
    yLog: true,
    lines: peers.map(([, v]) => ({ group: v.group, points: v.points.map(([t, q]) => [t, q] as const) })),
    hLines: budgets,
  });
  const mix = Object.entries(r.series.mode_mix).map(([policy, rows]) =>
    lineChart({
      title: `Mode mix over time — ${policy}`,
      xLabel: "time (s)",
      yLabel: "share of fan-outs",
      width: 560,
      height: 320,
      series: ["speculate", "synchronous", "degrade", "error"].map((name, k) => ({
        name,
        points: rows.map((row) => [row[0], row[k + 1]!] as const),
      })),
    }),
  );
  const specBy = Object.entries(r.series.speculate_by_coordinator).map(([policy, byCoord]) =>
    lineChart({
      title: `Speculating share by coordinator — ${policy}`,
      xLabel: "time (s)",
      yLabel: "share speculating",
      width: 560,
      height: 320,
      series: Object.entries(byCoord).map(([c, pts]) => ({
        name: `${c} (${r.series.budgets[c]} ms)`,
        points: pts,
      })),
    }),
  );
  const policies = Object.keys(r.policies);
  const bars = groupedBarChart({
    title: "Commit rate vs decision-relevant commit rate",
    yLabel: "rate",
    yMax: 1.05,
    series: [
      "commit rate (per branch)",
      "commit rate (per speculative fan-out)",
      "decision-relevant commit rate",
    ],
    groups: policies.map((p) => ({
      label: p,
      values: [
        r.policies[p]!.commit_rate,
        r.policies[p]!.speculation_commit_rate,
        r.policies[p]!.decision_relevant_commit_rate,
      ],
    })),
  });
  const net = groupedBarChart({
    title: "Abandon cost and commits per fan-out",
    yLabel: "per fan-out",
    series: ["abandon cost (ms)", "commits", "late lost work (ms)"],
    groups: policies.map((p) => ({
      label: p,
      values: [
        r.policies[p]!.abandon_cost_ms_per_fanout,
        r.policies[p]!.commits_per_fanout,
        r.policies[p]!.late_lost_work_ms_per_fanout,
      ],
    })),
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tailswarm testbed — ${esc(r.scenario)}</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1500px}pre{background:#f6f6f6;padding:12px;overflow:auto;font-size:12px}
.row{display:flex;flex-wrap:wrap;gap:12px}h2{margin-top:32px}</style></head><body>
<h1>tailswarm testbed — ${esc(r.scenario)}</h1>
<p>Started ${esc(r.started_at)}, seed ${r.seed}, ${r.duration_s} s measured${r.interrupted ? " (<b>interrupted: partial results</b>)" : ""}.
Fields and the value model: docs/value-model.md. Raw numbers: report.json.</p>
<pre>${esc(formatTable(r))}</pre>
<h2>Latency against the budgets</h2>
<p>Per ${r.series.bucket_s} s bucket, from the latency of every branch the coordinators issued (branches cut off at a deadline count at their cut-off time, a lower bound). Dashed: each coordinator's budget.</p>
<div class="row">${p99}${p50}</div>
<h2>Commit rate against decision-relevant commit rate</h2>
<div class="row">${bars}${net}</div>
<h2>Mode mix over time</h2>
<div class="row">${mix.join("")}</div>
<h2>Which coordinators branch</h2>
<div class="row">${specBy.join("")}</div>
</body></html>
`;
}
