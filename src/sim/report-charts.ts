/**
 * The charts of `tailswarm sim`, each beside the paper's values it is compared with: backlog against
 * load in one panel per policy (the others grey behind it, so policies whose curves coincide, like
 * JSQ and BP, stay apart) with our stable load and the paper's marked; MABP's gain over Cost-BP
 * across β with the paper's stated range; the Proposition 3 gap against K with the paper's points
 * and the bound.
 */
import * as Plot from "@observablehq/plot";
import { PAPER_PROP3, PAPER_SWEEPS, PAPER_TABLE1 } from "./paper.js";
import { plotSvg } from "./svg-chart.js";
import { STABILITY } from "./params.js";

/** What the charts read of the sim report (src/sim/report.ts's SimReport). */
export interface SimChartInput {
  readonly table1: Readonly<Record<string, { readonly stable_load: number }>>;
  readonly extras: Readonly<Record<string, { readonly stable_load: number }>>;
  readonly prop3: Readonly<Record<string, number>>;
  readonly prop3_bound: Readonly<Record<string, number>>;
  readonly sweeps: {
    readonly load: Readonly<Record<string, readonly (readonly [number, number])[]>>;
    readonly beta: readonly {
      readonly beta: number;
      readonly penalty_gain_pct: number;
      readonly p95_gain_pct: number;
    }[];
  };
}

const OURS = "#1f5fbf";
const PAPER = "#d0470c";
const OTHERS = "#c9c9c9";

export function simCharts(r: SimChartInput, betaGrid: readonly number[]): Record<string, string> {
  const charts: Record<string, string> = {};
  if (Object.keys(r.sweeps.load).length > 0) charts["stability-vs-load.svg"] = stabilityChart(r);
  if (r.sweeps.beta.length > 0) charts["gain-vs-beta.svg"] = betaChart(r, betaGrid);
  if (Object.keys(r.prop3).length > 0) charts["prop3-gap.svg"] = prop3Chart(r);
  return charts;
}

interface LoadPoint {
  readonly policy: string;
  readonly load: number;
  readonly backlog: number;
}

function stabilityChart(r: SimChartInput): string {
  const policies = Object.keys(r.sweeps.load);
  const cols = policies.length <= 4 ? policies.length : Math.ceil(policies.length / 2);
  const fx = (d: { policy: string }): number => policies.indexOf(d.policy) % cols;
  const fy = (d: { policy: string }): number => Math.floor(policies.indexOf(d.policy) / cols);
  const points: LoadPoint[] = policies.flatMap((policy) =>
    r.sweeps.load[policy]!.map(([load, backlog]) => ({ policy, load, backlog: Math.max(backlog, 1) })),
  );
  const rows = { ...r.table1, ...r.extras };
  const ours = policies.flatMap((policy) => {
    const load = rows[policy]?.stable_load;
    return load === undefined ? [] : [{ policy, load, label: `ours ${fmt(load)}` }];
  });
  const paper = policies.flatMap((policy) => {
    const load = PAPER_TABLE1[policy]?.stable_load;
    return load === undefined ? [] : [{ policy, load, label: `paper ${fmt(load)}` }];
  });
  const names = policies.map((policy) => ({ policy }));
  const nRows = Math.ceil(policies.length / cols);
  const limit = STABILITY.maxMeanBacklog;
  const top = Math.max(limit, ...points.map((d) => d.backlog));
  const decades = [1, 10, 100, 1000, 10000, 100000, 1000000].filter((t) => t <= top * 1.001);
  return plotSvg(
    "Mean backlog against load, one panel per policy (the others in grey behind it)",
    {
      width: 250 * cols + 60,
      height: 60 + 240 * nRows,
      marginLeft: 56,
      marginTop: 24,
      marginBottom: 44,
      fx: { axis: null, padding: 0.1 },
      fy: { axis: null, padding: 0.18 },
      x: { label: "normalised load ρ →", labelAnchor: "center", ticks: 5 },
      y: {
        type: "log",
        label: "↑ mean post-warm-up backlog (log)",
        domain: [1, top],
        ticks: decades,
        tickFormat: "~s",
        grid: true,
      },
      marks: [
        Plot.frame({ stroke: "#ddd" }),
        Plot.ruleY([limit], { stroke: "#777", strokeDasharray: "4 3" }),
        Plot.line(points, { x: "load", y: "backlog", z: "policy", stroke: OTHERS, facet: "exclude", fx, fy }),
        Plot.line(points, { x: "load", y: "backlog", stroke: OURS, strokeWidth: 2.2, fx, fy }),
        Plot.dot(points, { x: "load", y: "backlog", fill: OURS, r: 2.5, fx, fy }),
        Plot.ruleX(ours, { x: "load", stroke: OURS, strokeWidth: 1.5, fx, fy }),
        Plot.ruleX(paper, { x: "load", stroke: PAPER, strokeWidth: 1.5, strokeDasharray: "5 3", fx, fy }),
        Plot.text(ours, {
          x: "load",
          text: "label",
          frameAnchor: "bottom",
          dy: -6,
          dx: 3,
          textAnchor: "start",
          fill: OURS,
          fx,
          fy,
        }),
        Plot.text(paper, {
          x: "load",
          text: "label",
          frameAnchor: "bottom",
          dy: -22,
          dx: 3,
          textAnchor: "start",
          fill: PAPER,
          fx,
          fy,
        }),
        Plot.text(names, {
          text: "policy",
          frameAnchor: "top-left",
          dx: 6,
          dy: 6,
          fontSize: 13,
          fontWeight: 600,
          fx,
          fy,
        }),
      ],
    },
    `solid blue: our largest stable load; dashed orange: the paper's (Table I); dashed grey: the stability limit, mean backlog ${limit}`,
  );
}

function betaChart(r: SimChartInput, betaGrid: readonly number[]): string {
  const ours = r.sweeps.beta.flatMap((b) => [
    { beta: b.beta, gain: b.penalty_gain_pct, series: "ours: penalty gain" },
    { beta: b.beta, gain: b.p95_gain_pct, series: "ours: P95 delay gain" },
  ]);
  const [lo, hi] = PAPER_SWEEPS.betaGainPercent;
  const b0 = betaGrid[0] ?? 0;
  const b1 = betaGrid[betaGrid.length - 1] ?? 1;
  const paper = [
    { beta: b0, gain: lo, series: "paper: penalty gain" },
    { beta: b1, gain: hi, series: "paper: penalty gain" },
  ];
  const color = {
    "ours: penalty gain": OURS,
    "ours: P95 delay gain": "#2a9d3a",
    "paper: penalty gain": PAPER,
  };
  const legend = Object.entries(color).map(([label, c]) => ({ label, c }));
  return plotSvg("MABP's gain over Cost-BP across the memory budget β (ρ0 = 0.85)", {
    width: 760,
    height: 400,
    marginRight: 190,
    marginLeft: 56,
    marginBottom: 45,
    x: { label: "memory budget β →", labelAnchor: "center" },
    y: { label: "↑ gain over Cost-BP (%)", grid: true, zero: true },
    marks: [
      Plot.ruleY([0], { stroke: "#999" }),
      Plot.line(ours, {
        x: "beta",
        y: "gain",
        z: "series",
        stroke: (d: { series: string }) => color[d.series as keyof typeof color],
        strokeWidth: 2.2,
      }),
      Plot.dot(ours, {
        x: "beta",
        y: "gain",
        fill: (d: { series: string }) => color[d.series as keyof typeof color],
        r: 3,
      }),
      Plot.line(paper, { x: "beta", y: "gain", stroke: PAPER, strokeWidth: 2, strokeDasharray: "6 4" }),
      Plot.dot(paper, { x: "beta", y: "gain", stroke: PAPER, fill: "white", r: 4, strokeWidth: 2 }),
      Plot.text(paper, {
        x: "beta",
        y: "gain",
        text: (d: { gain: number }) => `${d.gain}%`,
        dy: -10,
        fill: PAPER,
      }),
      ...legendMarks(legend, "The paper states only the range across β; drawn at the grid's ends."),
    ],
  });
}

function prop3Chart(r: SimChartInput): string {
  const ks = Object.keys(r.prop3).map(Number);
  const rows = ks.flatMap((K) => {
    const out = [
      { K, gap: r.prop3[String(K)]!, series: "ours" },
      { K, gap: r.prop3_bound[String(K)]!, series: "bound (K − 1)/2" },
    ];
    const p = PAPER_PROP3[String(K)];
    return p === undefined ? out : [...out, { K, gap: p, series: "paper" }];
  });
  const bound = "bound (K − 1)/2";
  const color = { ours: OURS, paper: PAPER, [bound]: "#333" };
  const legend = Object.entries(color).map(([label, c]) => ({ label, c }));
  const only = (name: string) => rows.filter((d) => d.series === name);
  return plotSvg("Proposition 3: BP − MABP one-step penalty gap against K", {
    width: 760,
    height: 400,
    marginRight: 190,
    marginLeft: 56,
    marginBottom: 45,
    x: { label: "non-cached factor K →", labelAnchor: "center", ticks: ks },
    y: { label: "↑ penalty gap", grid: true, zero: true },
    marks: [
      Plot.line(only("ours"), { x: "K", y: "gap", stroke: OURS, strokeWidth: 9, strokeOpacity: 0.3 }),
      Plot.dot(only("ours"), { x: "K", y: "gap", fill: OURS, r: 6, fillOpacity: 0.5 }),
      Plot.line(only(bound), {
        x: "K",
        y: "gap",
        stroke: color[bound],
        strokeWidth: 1.2,
        strokeDasharray: "2 3",
      }),
      Plot.line(only("paper"), { x: "K", y: "gap", stroke: PAPER, strokeWidth: 1.5, strokeDasharray: "6 4" }),
      Plot.dot(only("paper"), { x: "K", y: "gap", stroke: PAPER, fill: "white", r: 3.5, strokeWidth: 1.5 }),
      Plot.text(only("ours"), {
        x: "K",
        y: "gap",
        text: (d: { gap: number }) => d.gap.toFixed(2),
        dx: -10,
        dy: -12,
        fill: OURS,
      }),
      ...legendMarks(legend, "Where the lines coincide, ours (wide band) matches the paper and the bound."),
    ],
  });
}

/** A legend in the right margin, drawn into the SVG (a standalone file has no HTML legend). */
function legendMarks(items: readonly { label: string; c: string }[], note?: string): Plot.Markish[] {
  const at = (i: number): { frameAnchor: "top-right"; dy: number } => ({
    frameAnchor: "top-right",
    dy: 8 + 20 * i,
  });
  return [
    ...items.flatMap((d, i) => [
      Plot.dot([d], { ...at(i), dx: 18, fill: d.c, r: 5 }),
      Plot.text([d], {
        ...at(i),
        dx: 28,
        text: () => d.label,
        textAnchor: "start",
        lineAnchor: "middle",
        fill: d.c,
        fontSize: 12,
      }),
    ]),
    ...(note === undefined
      ? []
      : [
          Plot.text([note], {
            ...at(items.length),
            dx: 18,
            dy: 14 + 20 * items.length,
            textAnchor: "start",
            lineAnchor: "top",
            fill: "#666",
            fontSize: 10,
            lineWidth: 13,
          }),
        ]),
  ];
}

function fmt(x: number): string {
  return String(Number(x.toFixed(2)));
}
