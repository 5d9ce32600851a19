/**
 * The two chart shapes the report needs beyond src/sim/svg-chart.ts's line chart: many thin lines
 * coloured by group (one line per peer), and grouped bars. Self-contained SVG, no network.
 */
import { esc, fmt, plotFrame, px, svgHeader, ticks, xyAxes, yGrid } from "../util/svg.js";

export interface GroupedLine {
  readonly group: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface ManyLinesOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly lines: readonly GroupedLine[];
  readonly hLines?: readonly { readonly y: number; readonly label: string }[];
  readonly yLog?: boolean;
  readonly width?: number;
  readonly height?: number;
}

/** Groups take colours in this order (peer groups read better without red first). */
const COLORS = ["#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

export function manyLinesChart(o: ManyLinesOptions): string {
  const width = o.width ?? 760;
  const height = o.height ?? 420;
  const m = { left: 64, right: 190, top: 40, bottom: 50 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const ty = (y: number): number => (o.yLog ? Math.log10(Math.max(y, 1e-3)) : y);
  const pts = o.lines.flatMap((l) => l.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const refs = o.hLines ?? [];
  const xs = pts.map((p) => p[0]);
  const ys = [...pts.map((p) => ty(p[1])), ...refs.map((h) => ty(h.y))];
  const x0 = Math.min(...xs, 0);
  let x1 = Math.max(...xs, 1);
  const y0 = o.yLog ? Math.min(...ys) : 0;
  let y1 = Math.max(...ys, 1);
  if (x0 === x1) x1 = x0 + 1;
  if (y0 === y1) y1 = y0 + 1;
  const sx = (x: number): number => m.left + ((x - x0) / (x1 - x0)) * pw;
  const sy = (y: number): number => m.top + ph - ((ty(y) - y0) / (y1 - y0)) * ph;
  const groups = [...new Set(o.lines.map((l) => l.group))];
  const color = (g: string): string => COLORS[groups.indexOf(g) % COLORS.length]!;
  const out = [svgHeader(width, height, o.title)];
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
  for (const l of o.lines) {
    const valid = l.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (valid.length === 0) continue;
    const d = valid.map(([x, y], k) => `${k === 0 ? "M" : "L"}${px(sx(x))} ${px(sy(y))}`).join(" ");
    out.push(
      `<path d="${d}" fill="none" stroke="${color(l.group)}" stroke-width="1.2" stroke-opacity="0.7"/>`,
    );
  }
  for (const h of refs) {
    out.push(
      `<line x1="${m.left}" y1="${px(sy(h.y))}" x2="${m.left + pw}" y2="${px(sy(h.y))}" stroke="#000" stroke-dasharray="6 4"/>`,
      `<text x="${m.left + pw + 6}" y="${px(sy(h.y) + 4)}" font-size="11">${esc(h.label)}</text>`,
    );
  }
  groups.forEach((g, i) => {
    out.push(
      `<rect x="${m.left + pw + 12}" y="${height - m.bottom - 18 * (groups.length - i)}" width="14" height="3" fill="${color(g)}"/>`,
      `<text x="${m.left + pw + 32}" y="${height - m.bottom - 18 * (groups.length - i) + 5}">${esc(g)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

export interface BarGroup {
  readonly label: string;
  /** One value per series; null draws no bar (and "n/a"). */
  readonly values: readonly (number | null)[];
}

export function groupedBarChart(o: {
  readonly title: string;
  readonly yLabel: string;
  readonly series: readonly string[];
  readonly groups: readonly BarGroup[];
  readonly yMax?: number;
  readonly width?: number;
  readonly height?: number;
}): string {
  const width = o.width ?? 720;
  const height = o.height ?? 380;
  const m = { left: 64, right: 200, top: 40, bottom: 50 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const all = o.groups.flatMap((g) => g.values).filter((v): v is number => v !== null && Number.isFinite(v));
  const yMax = o.yMax ?? Math.max(1e-9, ...all) * 1.1;
  const sy = (y: number): number => m.top + ph - (y / yMax) * ph;
  const out = [svgHeader(width, height, o.title)];
  out.push(...yGrid(m, pw, ticks(0, yMax), sy));
  out.push(plotFrame(m, pw, ph, height, "", o.yLabel));
  const gw = pw / Math.max(1, o.groups.length);
  const bw = (gw * 0.8) / Math.max(1, o.series.length);
  o.groups.forEach((g, gi) => {
    const gx = m.left + gi * gw + gw * 0.1;
    out.push(
      `<text x="${px(gx + gw * 0.4)}" y="${m.top + ph + 18}" text-anchor="middle">${esc(g.label)}</text>`,
    );
    g.values.forEach((v, si) => {
      const x = gx + si * bw;
      if (v === null || !Number.isFinite(v)) {
        out.push(
          `<text x="${px(x + bw / 2)}" y="${px(sy(0) - 4)}" text-anchor="middle" font-size="10">n/a</text>`,
        );
        return;
      }
      out.push(
        `<rect x="${px(x)}" y="${px(sy(v))}" width="${px(bw - 2)}" height="${px(sy(0) - sy(v))}" fill="${COLORS[si % COLORS.length]}"/>`,
        `<text x="${px(x + bw / 2)}" y="${px(sy(v) - 3)}" text-anchor="middle" font-size="10">${fmt(v)}</text>`,
      );
    });
  });
  o.series.forEach((s, i) => {
    const y = m.top + 10 + i * 18;
    out.push(
      `<rect x="${m.left + pw + 12}" y="${y - 6}" width="14" height="10" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${m.left + pw + 32}" y="${y + 3}">${esc(s)}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
