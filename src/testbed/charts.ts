/**
 * What every chart of report.html shares: one colour per policy and per mode (the same in every
 * chart), readable log ticks (1, 2, 5 × 10^k), and how a chart and its caption are wrapped. The
 * charts themselves are Observable Plot rendered to static markup (src/sim/svg-chart.ts).
 */
import { esc, plotFigure } from "../sim/svg-chart.js";
import * as Plot from "@observablehq/plot";
import type { ReportView } from "./report-view.js";

const POLICY_COLORS: Readonly<Record<string, string>> = {
  "p99-boundary": "#1f5fbf",
  "naive-p50": "#d0470c",
  "always-sync": "#2a9d3a",
  never: "#6b6b6b",
};
const SPARE = ["#8e44ad", "#b8860b", "#17becf", "#e377c2"];

/** The colour scale of the policies (fixed colours for the four known ones). */
export function policyColor(policies: readonly string[]): { domain: string[]; range: string[] } {
  let spare = 0;
  return {
    domain: [...policies],
    range: policies.map((p) => POLICY_COLORS[p] ?? SPARE[spare++ % SPARE.length]!),
  };
}

export const MODES = ["speculate", "synchronous", "degrade", "error"] as const;
export const MODE_COLORS = ["#1f5fbf", "#7fb77e", "#c9c9c9", "#d62728"];

/** 1, 2, 5 × 10^k ticks within [lo, hi]: a log axis that reads 10, 20, 50, 100, 200, 500. */
export function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  if (!(lo > 0) || !(hi >= lo)) return out;
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++)
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (t >= lo * 0.999 && t <= hi * 1.001) out.push(Number(t.toPrecision(3)));
    }
  return out;
}

/** A log domain padded to the next 1-2-5 ticks around the values. */
export function logDomain(values: readonly number[]): [number, number] {
  const xs = values.filter((v) => v > 0 && Number.isFinite(v));
  if (xs.length === 0) return [1, 10];
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const down = (v: number): number => {
    const e = 10 ** Math.floor(Math.log10(v));
    return ([5, 2, 1].map((m) => m * e).find((t) => t <= v) ?? e) * 1;
  };
  const up = (v: number): number => {
    const e = 10 ** Math.floor(Math.log10(v));
    return [1, 2, 5, 10].map((m) => m * e).find((t) => t >= v) ?? 10 * e;
  };
  return [down(lo), up(hi)];
}

/** A log axis over [lo, hi] with 1-2-5 ticks printed as plain numbers. */
export function logAxis(lo: number, hi: number, label: string): Plot.ScaleOptions {
  return {
    type: "log",
    domain: [lo, hi],
    ticks: logTicks(lo, hi),
    tickFormat: (d: number) => String(d),
    label,
    grid: true,
  };
}

/** The time axis of the measured run, s. */
export function runTimeAxis(r: ReportView): Plot.ScaleOptions {
  return {
    domain: [0, Math.max(r.duration_s, r.series.bucket_s)],
    label: "time into the measured run (s) →",
    labelAnchor: "center",
  };
}

/** A coordinator as the charts name it: with its budget. */
export function coordinatorLabel(r: ReportView, c: string): string {
  return `${c} · ${r.series.budgets[c]} ms`;
}

/** One chart in the page: its heading, the figure, and a caption that says how to read it. */
export function chartBlock(id: string, heading: string, options: Plot.PlotOptions, caption: string): string {
  return `<figure class="chart" id="${esc(id)}"><h3>${esc(heading)}</h3>${plotFigure(options)}<figcaption>${esc(caption)}</figcaption></figure>`;
}

/** Each `fy` facet's title (the facet's value), in bold at its top-left corner moved by `dx`, `dy`. */
export function facetTitles(titles: readonly string[], dx: number, dy: number): Plot.Markish {
  return Plot.text(titles, {
    fy: (d: string) => d,
    text: (d: string) => d,
    frameAnchor: "top-left",
    dx,
    dy,
    textAnchor: "start",
    fontWeight: 600,
  });
}

/** Small multiples, each plot with its own scales, under one heading and caption. */
export function multiplesBlock(
  id: string,
  heading: string,
  plots: readonly Plot.PlotOptions[],
  caption: string,
): string {
  return `<figure class="chart" id="${esc(id)}"><h3>${esc(heading)}</h3><div class="multiples">${plots.map((o) => plotFigure(o)).join("")}</div><figcaption>${esc(caption)}</figcaption></figure>`;
}

/** A chart that cannot be drawn from this report.json, and why. */
export function missingBlock(id: string, heading: string, why: string): string {
  return `<figure class="chart missing" id="${esc(id)}"><h3>${esc(heading)}</h3><p>${esc(why)}</p></figure>`;
}

export function fixed(x: number | null | undefined, digits: number): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(digits);
}

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
