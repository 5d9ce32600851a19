/**
 * The deciding figure: net value per fan-out of each policy at each coordinator and over all of
 * them, the mean with its 95% interval, one panel per coordinator on its own axis (one policy's
 * losses at one coordinator must not flatten the rest), the leader of each ringed and named above it
 * ("not shown" where its paired lead over the runner-up covers 0).
 */
import * as Plot from "@observablehq/plot";
import { ALL_COORDINATORS } from "./net-value-intervals.js";
import { coordinatorLabel, missingBlock, multiplesBlock, policyColor } from "./charts.js";
import { coordinatorsByBudget } from "./report-view.js";
import type { ReportView } from "./report-view.js";
import { leadOf, leadShown } from "./verdict.js";

interface Row {
  readonly policy: string;
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly best: boolean;
}

export function netValueChart(r: ReportView): string {
  const heading = "Net value per fan-out: mean and 95% interval, per coordinator";
  const nv = r.net_value;
  if (nv === undefined)
    return missingBlock("net-value", heading, "This report.json has no net_value section.");
  const groups = [...coordinatorsByBudget(r), ALL_COORDINATORS].filter((g) => nv.groups[g] !== undefined);
  const policies = Object.keys(r.policies);
  const plots = groups.map((g, i): Plot.PlotOptions => {
    const group = nv.groups[g]!;
    const lead = leadOf(group);
    const rows: Row[] = policies.flatMap((p) => {
      const m = group.policies[p];
      return m === null || m === undefined
        ? []
        : [{ policy: p, mean: m.mean, lo: m.lo95, hi: m.hi95, best: lead?.best === p }];
    });
    const [lo, hi] = domainOf(rows);
    const pad = (hi - lo) * 0.08 || 1;
    const off = rows.filter((d) => d.mean < lo - pad || d.mean > hi + pad);
    const first = i === 0;
    return {
      title: g === ALL_COORDINATORS ? "all coordinators" : coordinatorLabel(r, g),
      subtitle: lead === null ? "" : `${lead.best} best${leadShown(lead) ? "" : " (not shown)"}`,
      width: first ? 250 : 170,
      height: 50 + policies.length * 32,
      marginLeft: first ? 92 : 12,
      marginRight: 12,
      marginTop: 14,
      marginBottom: 34,
      x: { domain: [lo - pad, hi + pad], label: null, grid: true, ticks: 3, tickFormat: "~s" },
      y: { domain: policies, label: null, axis: first ? "left" : null },
      color: policyColor(policies),
      marks: [
        Plot.frame({ stroke: "#e2e2e2" }),
        Plot.ruleX([0], { stroke: "#333" }),
        Plot.ruleY(rows, { y: "policy", x1: "lo", x2: "hi", stroke: "policy", strokeWidth: 2.5, clip: true }),
        Plot.dot(
          rows.filter((d) => d.best),
          { y: "policy", x: "mean", r: 8, stroke: "#111", strokeWidth: 1.5, clip: true },
        ),
        Plot.dot(rows, { y: "policy", x: "mean", fill: "policy", r: 4.5, clip: true }),
        Plot.text(
          rows.filter((d) => !off.includes(d)),
          { y: "policy", x: "mean", text: (d: Row) => d.mean.toFixed(1), dy: -11, fontSize: 10 },
        ),
        // A mean far outside the others' range: written at the panel's edge instead of flattening the rest.
        ...[-1, 1].map((side) =>
          Plot.text(
            off.filter((d) => (side < 0 ? d.mean < lo : d.mean > hi)),
            {
              y: "policy",
              x: side < 0 ? lo - pad : hi + pad,
              text: (d: Row) => (side < 0 ? `◀ ${d.mean.toFixed(1)}` : `${d.mean.toFixed(1)} ▶`),
              textAnchor: side < 0 ? "start" : "end",
              dy: -11,
              fontSize: 11,
              fontWeight: 600,
            },
          ),
        ),
      ],
    };
  });
  const w = r.value_model.weights;
  return multiplesBlock(
    "net-value",
    heading,
    plots,
    "Each panel has its own axis; a mean far beyond the others' (◀ or ▶) is written at the edge, its bar cut there. A dot is a policy's mean net value over its fan-outs at that coordinator; the bar is the mean's 95% interval; " +
      'the ring marks the highest mean, and "not shown" says that its paired difference with the runner-up, on the same requests, has an interval that covers 0. ' +
      `Weights: correct answer ${w.correct}, latency ${w.latencyPerMs} per ms, lost work ${w.abandonPerMs} per ms, deadline miss ${w.miss}.`,
  );
}

/**
 * The panel's x range: every interval and 0, unless one policy's mean lies more than twice the
 * others' span beyond them; then the others' range, so that they stay readable.
 */
function domainOf(rows: readonly Row[]): [number, number] {
  const all: [number, number] = [
    Math.min(0, ...rows.map((d) => d.lo)),
    Math.max(0, ...rows.map((d) => d.hi)),
  ];
  if (rows.length < 3) return all;
  const sorted = [...rows].sort((a, b) => a.mean - b.mean);
  for (const cut of [sorted[0]!, sorted[sorted.length - 1]!]) {
    const rest = rows.filter((d) => d !== cut);
    const lo = Math.min(0, ...rest.map((d) => d.lo));
    const hi = Math.max(0, ...rest.map((d) => d.hi));
    const span = hi - lo || 1;
    if (cut.mean < lo - 2 * span || cut.mean > hi + 2 * span) return [lo, hi];
  }
  return all;
}
