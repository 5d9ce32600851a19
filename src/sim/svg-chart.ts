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

const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

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

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${esc(o.title)}</text>`,
  );
  for (const t of ticks(x0, x1)) {
    const x = sx(t);
    out.push(
      `<line x1="${f(x)}" y1="${m.top}" x2="${f(x)}" y2="${m.top + ph}" stroke="#eee"/>`,
      `<text x="${f(x)}" y="${m.top + ph + 16}" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  for (const t of ticks(y0, y1)) {
    const yv = o.yLog ? Math.pow(10, t) : t;
    const y = sy(yv);
    out.push(
      `<line x1="${m.left}" y1="${f(y)}" x2="${m.left + pw}" y2="${f(y)}" stroke="#eee"/>`,
      `<text x="${m.left - 6}" y="${f(y + 4)}" text-anchor="end">${fmt(yv)}</text>`,
    );
  }
  out.push(
    `<rect x="${m.left}" y="${m.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`,
    `<text x="${m.left + pw / 2}" y="${height - 14}" text-anchor="middle">${esc(o.xLabel)}</text>`,
    `<text transform="translate(18 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}${o.yLog ? " (log)" : ""}</text>`,
  );
  for (const h of refs) {
    const y = sy(h.y);
    out.push(
      `<line x1="${m.left}" y1="${f(y)}" x2="${m.left + pw}" y2="${f(y)}" stroke="#999" stroke-dasharray="5 4"/>`,
      `<text x="${m.left + pw - 4}" y="${f(y - 4)}" text-anchor="end" fill="#666">${esc(h.label)}</text>`,
    );
  }
  o.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const valid = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(ty(y)));
    if (valid.length > 0) {
      const d = valid.map(([x, y], k) => `${k === 0 ? "M" : "L"}${f(sx(x))} ${f(sy(y))}`).join(" ");
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
      for (const [x, y] of valid)
        out.push(`<circle cx="${f(sx(x))}" cy="${f(sy(y))}" r="3" fill="${color}"/>`);
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

function extent(xs: readonly number[]): [number, number] {
  if (xs.length === 0) return [0, 1];
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}

function ticks(lo: number, hi: number): number[] {
  const span = hi - lo;
  const raw = span / 6;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? mag * 10;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push(Math.round(t / step) * step);
  return out;
}

function f(n: number): string {
  return n.toFixed(1);
}

function fmt(n: number): string {
  if (n !== 0 && (Math.abs(n) >= 1e4 || Math.abs(n) < 1e-2)) return n.toExponential(0);
  return String(Number(n.toPrecision(3)));
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
