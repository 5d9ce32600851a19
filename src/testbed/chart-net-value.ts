/**
 * The deciding figure: net value per fan-out of each policy at each coordinator and over all of
 * them, the mean with its 95% interval, the leader of each panel ringed and named above it (with
 * "not shown" where its paired lead over the runner-up covers 0).
 */
import * as Plot from "@observablehq/plot";
import { ALL_COORDINATORS } from "./net-value-intervals.js";
import { chartBlock, missingBlock, policyColor } from "./charts.js";
import { coordinatorsByBudget } from "./report-view.js";
import type { ReportView } from "./report-view.js";
import { leadOf, leadShown } from "./verdict.js";

interface Row {
  readonly group: string;
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
  const rows: Row[] = [];
  const titles = new Map<string, string>();
  for (const g of groups) {
    const group = nv.groups[g]!;
    const lead = leadOf(group);
    const where = g === ALL_COORDINATORS ? "all coordinators" : `${g} · ${r.series.budgets[g]} ms`;
    titles.set(
      g,
      lead === null ? where : `${where}\n${lead.best} best${leadShown(lead) ? "" : " (not shown)"}`,
    );
    for (const p of policies) {
      const m = group.policies[p];
      if (m === null || m === undefined) continue;
      rows.push({ group: g, policy: p, mean: m.mean, lo: m.lo95, hi: m.hi95, best: lead?.best === p });
    }
  }
  const lo = Math.min(0, ...rows.map((d) => d.lo));
  const hi = Math.max(0, ...rows.map((d) => d.hi));
  const pad = (hi - lo) * 0.06;
  const w = r.value_model.weights;
  return chartBlock(
    "net-value",
    heading,
    {
      width: 780,
      height: 90 + policies.length * 32,
      marginLeft: 92,
      marginTop: 44,
      marginRight: 12,
      marginBottom: 40,
      fx: { domain: groups, tickFormat: (g: string) => titles.get(g) ?? g, label: null, padding: 0.08 },
      x: {
        domain: [lo - pad, hi + pad],
        label: "net value per fan-out →",
        labelAnchor: "center",
        grid: true,
        ticks: 3,
      },
      y: { domain: policies, label: null },
      color: policyColor(policies),
      marks: [
        Plot.frame({ stroke: "#e2e2e2" }),
        Plot.ruleX([0], { stroke: "#333" }),
        Plot.ruleY(rows, {
          fx: "group",
          y: "policy",
          x1: "lo",
          x2: "hi",
          stroke: "policy",
          strokeWidth: 2.5,
        }),
        Plot.dot(
          rows.filter((d) => d.best),
          { fx: "group", y: "policy", x: "mean", r: 8, stroke: "#111", strokeWidth: 1.5 },
        ),
        Plot.dot(rows, { fx: "group", y: "policy", x: "mean", fill: "policy", r: 4.5 }),
        Plot.text(rows, {
          fx: "group",
          y: "policy",
          x: "mean",
          text: (d: Row) => d.mean.toFixed(1),
          dy: -11,
          fontSize: 10,
        }),
      ],
    },
    "Each dot is a policy's mean net value over its fan-outs at that coordinator; the bar is the mean's 95% interval; the ring marks the highest mean. " +
      '"not shown": the leader\'s paired difference with the runner-up, on the same requests, has an interval that covers 0. ' +
      `Weights: correct answer ${w.correct}, latency ${w.latencyPerMs} per ms, lost work ${w.abandonPerMs} per ms, deadline miss ${w.miss}.`,
  );
}
