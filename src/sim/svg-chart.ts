/**
 * Observable Plot rendered at report time, outside a browser: a server-side DOM (linkedom) stands in
 * for `document`, and the chart comes back as static markup that opens offline with no script.
 * `plotFigure` keeps Plot's HTML legend and caption (for report.html); `plotSvg` returns a standalone
 * `.svg` file (title drawn into the SVG, no HTML legend: label the marks directly).
 *
 * @example
 * const svg = plotSvg("Backlog vs load", { marks: [Plot.lineY(rows, { x: "load", y: "backlog" })] });
 * await writeFile("backlog.svg", svg);
 */
import * as Plot from "@observablehq/plot";
import { parseHTML } from "linkedom";

/** Class prefix of every chart's elements (its legend swatches are `.ts-plot-swatch`). */
export const PLOT_CLASS = "ts-plot";

const FONT = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif";

/**
 * What is read of the element Plot returns: a linkedom node. The project compiles without the DOM
 * types, so Plot's `Document` and element types are opaque here and linkedom's document passes as one.
 */
interface MarkupElement {
  readonly outerHTML: string;
  readonly tagName: string;
  querySelector(selector: string): MarkupElement | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
}

function render(options: Plot.PlotOptions): MarkupElement {
  const { document } = parseHTML("<!doctype html><html><body></body></html>");
  return Plot.plot({
    style: { fontSize: "12px", fontFamily: FONT, background: "white", overflow: "visible" },
    ...options,
    className: PLOT_CLASS,
    document,
  });
}

/** The chart as an HTML `<figure>` (or a bare `<svg>` when it has no title, caption or legend). */
export function plotFigure(options: Plot.PlotOptions): string {
  return render(options).outerHTML;
}

/** A standalone SVG document: `title` (and a smaller `note`) above the plot, no HTML legend or caption. */
export function plotSvg(
  title: string,
  options: Omit<Plot.PlotOptions, "title" | "caption">,
  note?: string,
): string {
  const el = render({ ...options, title: undefined, caption: undefined });
  const svg = el.tagName.toLowerCase() === "svg" ? el : el.querySelector("svg");
  if (svg === null) throw new Error("plotSvg: Plot returned no <svg>");
  const w = Number(svg.getAttribute("width"));
  const h = Number(svg.getAttribute("height"));
  const head = note === undefined ? 32 : 50;
  svg.setAttribute("y", String(head));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h + head}" viewBox="0 0 ${w} ${h + head}" font-family="${esc(FONT)}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${w / 2}" y="21" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`,
    ...(note === undefined
      ? []
      : [`<text x="${w / 2}" y="40" text-anchor="middle" font-size="12" fill="#555">${esc(note)}</text>`]),
    svg.outerHTML,
    "</svg>",
    "",
  ].join("\n");
}

/** Escapes text for HTML and XML content and attribute values. */
export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
