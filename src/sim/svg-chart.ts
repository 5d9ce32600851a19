/**
 * A tiny dependency-free SVG line chart: self-contained output that any browser opens offline. Generic
 * on purpose (the testbed report reuses it).
 *
 * @example
 * const svg = lineChart({
 *   title: "Stability vs load",
 *   xLabel: "load ρ",
 *   yLabel: "mean backlog",
 *   series: [{ name: "MABP", points: [[0.5, 10], [0.9, 40]] }],
 * });
 * await writeFile("stability.svg", svg);
 */

import { esc, extent, PALETTE, px, svgHeader, xyAxes } from "../util/svg.js";

export interface LineSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface LineChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly LineSeries[];
  readonly width?: number;
  readonly height?: number;
  /** Log10 y axis (non-positive values are dropped). */
  readonly yLog?: boolean;
  /** Horizontal reference lines, e.g. a threshold. */
  readonly hLines?: readonly { readonly y: number; readonly label: string }[];
}

export function lineChart(o: LineChartOptions): string {
  const width = o.width ?? 720;
  const height = o.height ?? 420;
  const m = { left: 70, right: 170, top: 40, bottom: 55 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const ty = (y: number): number => (o.yLog ? Math.log10(y) : y);
  const pts = o.series
    .flatMap((s) => s.points)
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(ty(y)));
  const refs = (o.hLines ?? []).filter((h) => Number.isFinite(ty(h.y)));
  let [x0, x1] = extent(pts.map((p) => p[0]));
  let [y0, y1] = extent([...pts.map((p) => ty(p[1])), ...refs.map((h) => ty(h.y))]);
  if (!o.yLog) y0 = Math.min(0, y0);
  if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  if (y0 === y1) [y0, y1] = [y0 - 1, y1 + 1];
  const sx = (x: number): number => m.left + ((x - x0) / (x1 - x0)) * pw;
  const sy = (y: number): number => m.top + ph - ((ty(y) - y0) / (y1 - y0)) * ph;

  const out: string[] = [svgHeader(width, height, o.title)];
  out.push(
    ...xyAxes(m, pw, ph, height, {
      x: [x0, x1],
      y: [y0, y1],
      sx,
      sy,
      yLog: o.yLog === true,
      xLabel: o.xLabel,
      yLabel: o.yLabel,
    }),
  );
  for (const h of refs) {
    const y = sy(h.y);
    out.push(
      `<line x1="${m.left}" y1="${px(y)}" x2="${m.left + pw}" y2="${px(y)}" stroke="#999" stroke-dasharray="5 4"/>`,
      `<text x="${m.left + pw - 4}" y="${px(y - 4)}" text-anchor="end" fill="#666">${esc(h.label)}</text>`,
    );
  }
  o.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const valid = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(ty(y)));
    if (valid.length > 0) {
      const d = valid.map(([x, y], k) => `${k === 0 ? "M" : "L"}${px(sx(x))} ${px(sy(y))}`).join(" ");
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
      for (const [x, y] of valid)
        out.push(`<circle cx="${px(sx(x))}" cy="${px(sy(y))}" r="3" fill="${color}"/>`);
    }
    const ly = m.top + 10 + i * 18;
    out.push(
      `<line x1="${m.left + pw + 12}" y1="${ly}" x2="${m.left + pw + 32}" y2="${ly}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${m.left + pw + 38}" y="${ly + 4}">${esc(s.name)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
