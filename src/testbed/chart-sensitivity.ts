/**
 * The sensitivity grid as a heat map: one row per weighting, one column per policy, each cell its net
 * value per fan-out (colour diverging at 0), the best of the row outlined; a last column says
 * whether the rule's paired difference with naive-p50 is above 0, below it, or not shown.
 */
import * as Plot from "@observablehq/plot";
import { chartBlock, facetTitles, missingBlock } from "./charts.js";
import type { ReportView } from "./report-view.js";

interface Cell {
  readonly panel: string;
  readonly row: string;
  readonly col: string;
  readonly value: number | null;
  readonly text: string;
  readonly best: boolean;
  readonly verdict?: "above" | "below" | "not shown";
}

export const RULE_MINUS_NAIVE = "rule − naive [95%]";

export function sensitivityChart(r: ReportView): string {
  const heading = "Which policy wins as the weights change (the sensitivity grid)";
  if (r.sensitivity.length === 0)
    return missingBlock("sensitivity", heading, "This report has no sensitivity grid.");
  const policies = Object.keys(r.policies);
  const cells: Cell[] = [];
  const rows: string[] = [];
  const panels: string[] = [];
  for (const g of r.sensitivity) {
    const w = g.weights;
    const panel = `correct ${w.correct} · miss ${w.miss}`;
    const row = `latency ${w.latencyPerMs}/ms · lost work ${w.abandonPerMs}/ms`;
    if (!panels.includes(panel)) panels.push(panel);
    if (!rows.includes(row)) rows.push(row);
    for (const p of policies) {
      const v = g.net_value_per_fanout[p] ?? null;
      cells.push({
        panel,
        row,
        col: p,
        value: v,
        text: v === null ? "n/a" : v.toFixed(1),
        best: g.best.includes(p),
      });
    }
    const d = g.rule_minus_naive;
    if (d !== null && d !== undefined) {
      const verdict = d.lo95 > 0 ? "above" : d.hi95 < 0 ? "below" : "not shown";
      cells.push({
        panel,
        row,
        col: RULE_MINUS_NAIVE,
        value: null,
        text: `${d.mean > 0 ? "+" : ""}${d.mean.toFixed(1)} [${d.lo95.toFixed(1)}, ${d.hi95.toFixed(1)}]`,
        best: false,
        verdict,
      });
    }
  }
  const values = cells.flatMap((c) => (c.value === null ? [] : [Math.abs(c.value)]));
  // Steps sized to the bulk of the values (their 80th percentile), so that one policy's large losses
  // do not wash out the rest; the outer steps are open-ended.
  const sorted = [...values].sort((a, b) => a - b);
  const bulk = sorted[Math.floor(0.8 * (sorted.length - 1))] ?? 1;
  const extent = niceStep(Math.max(1, bulk) / 3) * 4;
  const cols = [...policies, ...(cells.some((c) => c.col === RULE_MINUS_NAIVE) ? [RULE_MINUS_NAIVE] : [])];
  const valued = cells.filter((c) => c.col !== RULE_MINUS_NAIVE);
  const diffs = cells.filter((c) => c.col === RULE_MINUS_NAIVE);
  const diffFill = { above: "#d8ecd5", below: "#f6d5d0", "not shown": "#eeeeee" };
  return chartBlock(
    "sensitivity",
    heading,
    {
      width: 940,
      height: 60 + panels.length * (rows.length * 26 + 30),
      marginLeft: 210,
      marginTop: 40,
      marginRight: 10,
      x: { domain: cols, axis: "top", label: null, tickSize: 0, padding: 0.04 },
      y: { domain: rows, label: null, tickSize: 0, padding: 0.06 },
      fy: { domain: panels, axis: null, padding: 0.2 },
      color: {
        // Discrete steps, symmetric about 0: a ramp legend needs a canvas, which a static page has not.
        type: "threshold",
        scheme: "RdBu",
        domain: thresholds(extent),
        legend: true,
        label: "net value per fan-out",
        tickFormat: "~s",
      },
      marks: [
        Plot.cell(valued, { fy: "panel", x: "col", y: "row", fill: "value", inset: 1 }),
        Plot.cell(diffs, {
          fy: "panel",
          x: "col",
          y: "row",
          fill: (d: Cell) => diffFill[d.verdict ?? "not shown"],
          inset: 1,
        }),
        Plot.cell(
          cells.filter((c) => c.best),
          { fy: "panel", x: "col", y: "row", fill: "none", stroke: "#111", strokeWidth: 2.5, inset: 2 },
        ),
        ...[false, true].map((best) =>
          Plot.text(
            cells.filter((c) => c.best === best),
            {
              fy: "panel",
              x: "col",
              y: "row",
              text: (d: Cell) => (d.best ? `${d.text} ★` : d.text),
              fill: (d: Cell) => (d.value !== null && Math.abs(d.value) >= extent / 2 ? "white" : "#111"),
              fontWeight: best ? 700 : 400,
            },
          ),
        ),
        facetTitles(panels, -204, -16),
      ],
    },
    "Each row is one weighting of the value model; each cell a policy's net value per fan-out there (blue above 0, red below). " +
      "★ and the outline mark the row's best policy. The last column is the rule minus naive-p50 on the same requests with its 95% interval: " +
      "green where the interval is above 0, red where below, grey where it covers 0 (not shown by this run).",
  );
}

/** 1, 2 or 5 × 10^k at or above x. */
function niceStep(x: number): number {
  const e = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * e).find((t) => t >= x) ?? 10 * e;
}

/** Seven thresholds, symmetric about 0, splitting [−extent, extent] into eight colour steps. */
function thresholds(extent: number): number[] {
  const step = extent / 4;
  return [-3, -2, -1, 0, 1, 2, 3].map((k) => k * step);
}
