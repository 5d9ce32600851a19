/**
 * The pieces every self-contained SVG chart here shares (src/sim/svg-chart.ts's line chart,
 * src/testbed/charts.ts's per-peer lines and grouped bars): the document header, the plot frame with
 * axis labels, grid lines with tick labels, "nice" ticks, number formatting and escaping. No
 * dependencies; the output opens in any browser offline.
 */

/** Series colours, in order. */
export const PALETTE = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#ff7f0e",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
];

export interface Margins {
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

/** `<svg ...>` with a white background and the title; the caller closes it with `</svg>`. */
export function svgHeader(width: number, height: number, title: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`,
  ].join("\n");
}

/** The plot area's border and the axis labels (x below, y rotated on the left). */
export function plotFrame(
  m: Margins,
  pw: number,
  ph: number,
  height: number,
  xLabel: string,
  yLabel: string,
): string {
  return [
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
    `<text x="${m.left + pw / 2}" y="${height - 12}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(16 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  ].join("\n");
}

/** Vertical grid lines at x ticks with labels below the plot; `sx` maps a value to pixels. */
export function xGrid(
  m: Margins,
  ph: number,
  values: readonly number[],
  sx: (x: number) => number,
): string[] {
  return values.flatMap((t) => [
    `<line x1="${px(sx(t))}" y1="${m.top}" x2="${px(sx(t))}" y2="${m.top + ph}" stroke="#eee"/>`,
    `<text x="${px(sx(t))}" y="${m.top + ph + 16}" text-anchor="middle">${fmt(t)}</text>`,
  ]);
}

/** Horizontal grid lines at y values with labels left of the plot; `sy` maps a value to pixels. */
export function yGrid(
  m: Margins,
  pw: number,
  values: readonly number[],
  sy: (y: number) => number,
): string[] {
  return values.flatMap((v) => [
    `<line x1="${m.left}" y1="${px(sy(v))}" x2="${m.left + pw}" y2="${px(sy(v))}" stroke="#eee"/>`,
    `<text x="${m.left - 6}" y="${px(sy(v) + 4)}" text-anchor="end">${fmt(v)}</text>`,
  ]);
}

/** About six "nice" (1, 2, 5 × 10^k) ticks covering [lo, hi]. */
export function ticks(lo: number, hi: number): number[] {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? mag * 10;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push(Math.round(t / step) * step);
  return out;
}

/** [min, max] of the values; [0, 1] when there are none. */
export function extent(xs: readonly number[]): [number, number] {
  if (xs.length === 0) return [0, 1];
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}

/** A pixel coordinate. */
export function px(n: number): string {
  return n.toFixed(1);
}

/** A tick or bar label: 3 significant digits, exponent form for very large or small values. */
export function fmt(n: number): string {
  if (n !== 0 && (Math.abs(n) >= 1e5 || Math.abs(n) < 1e-3)) return n.toExponential(0);
  return String(Number(n.toPrecision(3)));
}

export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The axes of an x/y chart: grids with tick labels over the domain, then the frame and labels. */
export function xyAxes(
  m: Margins,
  pw: number,
  ph: number,
  height: number,
  a: {
    readonly x: readonly [number, number];
    /** In plotted units: log10 of the value when `yLog`. */
    readonly y: readonly [number, number];
    readonly sx: (x: number) => number;
    readonly sy: (y: number) => number;
    readonly yLog?: boolean;
    readonly xLabel: string;
    readonly yLabel: string;
  },
): string[] {
  return [
    ...xGrid(m, ph, ticks(a.x[0], a.x[1]), a.sx),
    ...yGrid(
      m,
      pw,
      ticks(a.y[0], a.y[1]).map((t) => (a.yLog === true ? 10 ** t : t)),
      a.sy,
    ),
    plotFrame(m, pw, ph, height, a.xLabel, a.yLabel + (a.yLog === true ? " (log)" : "")),
  ];
}
