/**
 * Latency against the budgets: each peer's p50 and p99 over the run on a log axis with 1-2-5 ticks
 * and every coordinator's budget drawn across it; and each peer group's p99 over time, in buckets
 * wide enough to hold about ten fan-outs per coordinator and policy.
 */
import * as Plot from "@observablehq/plot";
import {
  chartBlock,
  coordinatorLabel,
  logAxis,
  logDomain,
  missingBlock,
  policyColor,
  runTimeAxis,
} from "./charts.js";
import { coordinatorsByBudget } from "./report-view.js";
import type { ReportView } from "./report-view.js";

interface PeerDot {
  readonly peer: string;
  readonly group: string;
  readonly p50: number;
  readonly p99: number;
  readonly lowerBound: boolean;
}

const GROUP_COLORS = ["#1f5fbf", "#2a9d3a", "#b8860b", "#d0470c", "#8e44ad", "#17becf"];

function budgetMarks(r: ReportView, axis: "x" | "y"): Plot.Markish[] {
  const budgets = Object.entries(r.series.budgets).map(([c, b]) => ({ c, b, label: `${c} budget ${b} ms` }));
  return axis === "x"
    ? [
        Plot.ruleX(budgets, { x: "b", stroke: "#111", strokeDasharray: "5 4" }),
        Plot.text(budgets, {
          x: "b",
          text: "label",
          frameAnchor: "top",
          dy: -6,
          lineAnchor: "bottom",
          fontSize: 11,
        }),
      ]
    : [
        Plot.ruleY(budgets, { y: "b", stroke: "#111", strokeDasharray: "5 4" }),
        Plot.text(budgets, {
          y: "b",
          text: "label",
          frameAnchor: "right",
          dx: 6,
          textAnchor: "start",
          fontSize: 11,
        }),
      ];
}

export function peerLatencyChart(r: ReportView): string {
  const heading = "Each peer's p50 and p99 over the run, against the coordinators' budgets";
  const summary = r.series.peer_summary;
  if (summary === undefined)
    return missingBlock(
      "peer-latency",
      heading,
      "This report.json has no per-peer summary (series.peer_summary).",
    );
  const dots: PeerDot[] = Object.entries(summary).map(([peer, s]) => ({
    peer,
    group: s.group,
    p50: s.p50_ms,
    p99: s.p99_ms,
    lowerBound: s.p99_lower_bound,
  }));
  const groups = [...new Set(dots.map((d) => d.group))].sort();
  const [lo, hi] = logDomain([...dots.flatMap((d) => [d.p50, d.p99]), ...Object.values(r.series.budgets)]);
  const lb = dots.filter((d) => d.lowerBound).length;
  return chartBlock(
    "peer-latency",
    heading,
    {
      width: 900,
      height: 70 + groups.length * 70,
      marginLeft: 170,
      marginTop: 30,
      marginRight: 70,
      marginBottom: 42,
      x: { ...logAxis(lo, hi, "latency (ms, log scale) →"), labelAnchor: "center" },
      y: { domain: groups, label: null },
      color: { domain: groups, range: GROUP_COLORS },
      marks: [
        ...budgetMarks(r, "x"),
        Plot.tickX(dots, { x: "p50", y: "group", stroke: "#999", strokeWidth: 1 }),
        Plot.dot(
          dots.filter((d) => d.lowerBound),
          { x: "p99", y: "group", stroke: "group", fill: "white", r: 4.5, strokeWidth: 1.5 },
        ),
        Plot.dot(
          dots.filter((d) => !d.lowerBound),
          { x: "p99", y: "group", fill: "group", r: 4.5, fillOpacity: 0.85 },
        ),
      ],
    },
    "Grey ticks: each peer's p50; dots: its p99, over every branch the coordinators sent it. " +
      "A branch cut off before it answered counts at its age when cut, so a peer's p99 can only be higher than drawn; " +
      `a hollow dot marks a p99 that falls among cut-off branches, a lower bound (${lb} of ${dots.length} peers). Dashed: each coordinator's budget.`,
  );
}

interface GroupPoint {
  readonly group: string;
  readonly t: number;
  readonly p99: number;
  readonly n: number;
}

export function groupLatencyChart(r: ReportView): string {
  const heading = "p99 latency of each peer group over time";
  const series = r.series.group_latency;
  if (series === undefined)
    return missingBlock(
      "group-latency",
      heading,
      "This report.json has no per-group series (series.group_latency).",
    );
  const points: GroupPoint[] = Object.entries(series).flatMap(([group, rows]) =>
    rows.map(([t, , p99, n]) => ({ group, t, p99, n })),
  );
  const groups = Object.keys(series).sort();
  const [lo, hi] = logDomain([...points.map((p) => p.p99), ...Object.values(r.series.budgets)]);
  return chartBlock(
    "group-latency",
    heading,
    {
      width: 900,
      height: 360,
      marginLeft: 56,
      marginRight: 170,
      marginBottom: 42,
      y: logAxis(lo, hi, "↑ p99 (ms, log scale)"),
      x: runTimeAxis(r),
      color: { domain: groups, range: GROUP_COLORS, legend: true },
      marks: [
        ...budgetMarks(r, "y"),
        Plot.line(points, { x: "t", y: "p99", stroke: "group", strokeWidth: 2 }),
        Plot.dot(points, { x: "t", y: "p99", fill: "group", r: 3 }),
      ],
    },
    `Each point: the p99 of all branches to the group's peers in a ${r.series.bucket_s} s bucket (cut-off branches at their age when cut, so a lower bound). ` +
      "A gateway episode is shorter than a bucket: it raises its group's p99 in that bucket rather than showing as a spike of its own.",
  );
}

interface SpecPoint {
  readonly policy: string;
  readonly coordinator: string;
  readonly t: number;
  readonly share: number;
}

export function speculateOverTimeChart(r: ReportView): string {
  const byPolicy = r.series.speculate_by_coordinator;
  const policies = Object.keys(byPolicy).filter((p) =>
    Object.values(byPolicy[p]!).some((pts) => pts.some(([, s]) => s > 0)),
  );
  const heading = "Share of requests each coordinator speculated on, over time";
  if (policies.length === 0)
    return missingBlock("speculate-over-time", heading, "No policy speculated in this run.");
  const coords = coordinatorsByBudget(r);
  const points: SpecPoint[] = policies.flatMap((policy) =>
    Object.entries(byPolicy[policy]!).flatMap(([coordinator, pts]) =>
      pts.map(([t, share]) => ({ policy, coordinator, t, share })),
    ),
  );
  return chartBlock(
    "speculate-over-time",
    heading,
    {
      width: 900,
      height: 60 + policies.length * 150,
      marginLeft: 110,
      marginRight: 46,
      marginTop: 30,
      marginBottom: 42,
      fx: { domain: coords, tickFormat: (c: string) => coordinatorLabel(r, c), label: null, padding: 0.08 },
      fy: { domain: policies, label: null, axis: "left", padding: 0.2 },
      y: { domain: [0, 1], ticks: [0, 0.5, 1], tickFormat: "%", label: null, grid: true, axis: "right" },
      x: runTimeAxis(r),
      color: policyColor(policies),
      marks: [
        Plot.frame({ stroke: "#ddd" }),
        Plot.areaY(points, {
          fx: "coordinator",
          fy: "policy",
          x: "t",
          y: "share",
          fill: "policy",
          fillOpacity: 0.15,
        }),
        Plot.line(points, {
          fx: "coordinator",
          fy: "policy",
          x: "t",
          y: "share",
          stroke: "policy",
          strokeWidth: 2,
        }),
        Plot.dot(points, { fx: "coordinator", fy: "policy", x: "t", y: "share", fill: "policy", r: 2.5 }),
      ],
    },
    `One panel per coordinator (columns) and policy (rows): per ${r.series.bucket_s} s bucket, the share of the coordinator's requests on which the policy speculated (axis on the right, 0–100%). ` +
      "The founding note expects instances with different budgets to differ: some branching, some not, at the same moment.",
  );
}
