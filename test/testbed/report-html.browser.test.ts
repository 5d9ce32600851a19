/**
 * report.html as a person sees it: built from a real run's report.json (a trimmed copy of a
 * `tailswarm testbed --duration 20` run), opened in Debian's headless Chromium at 1,400 × 900.
 * Set TAILSWARM_REPORT_SCREENSHOT=path.png to keep a screenshot of the whole page.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderHtml } from "../../src/testbed/report-html.js";
import type { Report } from "../../src/testbed/report.js";
import { verdict } from "../../src/testbed/verdict.js";
import { requireBackend } from "../support/backend.js";
import { haveChromium, openPage } from "../support/chromium.js";
import type { OpenedPage } from "../support/chromium.js";

const FIXTURE = new URL("./fixtures/seed-nat-tail-20s.report.json", import.meta.url);
const WIDTH = 1400;
const FIRST_SCREEN = 900;

interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly what: string;
}

/** The page's globals inside page.evaluate: the project compiles without the DOM types. */
interface PageElement {
  readonly id: string;
  readonly tagName: string;
  readonly textContent: string | null;
  readonly open?: boolean;
  getBoundingClientRect(): { x: number; y: number; width: number; height: number };
  closest(selector: string): PageElement | null;
}
declare const document: {
  readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare const window: { readonly scrollX: number; readonly scrollY: number };

const have = requireBackend(
  "chromium",
  haveChromium,
  "apt-get install -y chromium (scripts/ensure-test-deps.sh)",
);

describe.skipIf(!have)("report.html in headless Chromium", () => {
  const report = JSON.parse(readFileSync(FIXTURE, "utf8")) as Report;
  const html = renderHtml(report);
  let opened: OpenedPage;

  beforeAll(async () => {
    opened = await openPage(html, { width: WIDTH, height: FIRST_SCREEN });
    const shot = process.env.TAILSWARM_REPORT_SCREENSHOT;
    if (shot !== undefined && shot !== "")
      await writeFile(shot, await opened.page.screenshot({ fullPage: true }));
  }, 60_000);
  afterAll(async () => {
    await opened?.close();
  });

  it("renders with no console error and no network request", () => {
    expect(opened.errors).toEqual([]);
    expect(opened.requests).toEqual([]);
  });

  it("opens with the verdict: the whole paragraph is within the first screen", async () => {
    const box = await opened.page.locator("#verdict").boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y + box!.height).toBeLessThanOrEqual(FIRST_SCREEN);
    // nothing but the title and a line of context above it
    expect(box!.y).toBeLessThan(150);
  });

  it("says in the page the verdict generated from report.json", async () => {
    const text = await opened.page.locator("#verdict-text").textContent();
    expect(text).toBe(verdict(report).text);
    expect(text!.length).toBeGreaterThan(200);
  });

  it("does not scroll sideways at 1,400 px", async () => {
    const { scroll, client } = await opened.page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(scroll).toBeLessThanOrEqual(client);
  });

  it("draws every chart, and no legend box overlaps another, a chart's text, or the page's edge", async () => {
    const { legends, texts, charts } = await opened.page.evaluate(() => {
      const box = (e: PageElement, what: string) => {
        const r = e.getBoundingClientRect();
        return { x: r.x + window.scrollX, y: r.y + window.scrollY, w: r.width, h: r.height, what };
      };
      const legendEls = [...document.querySelectorAll('[class$="-swatch"], svg[class$="-ramp"]')];
      return {
        legends: legendEls.map((e) => ({
          ...box(
            e,
            `${e.closest("figure.chart")?.id ?? "?"}: ${e.tagName.toLowerCase() === "svg" ? "colour ramp" : (e.textContent ?? "")}`,
          ),
          chart: e.closest("figure.chart")?.id ?? "",
        })),
        texts: [...document.querySelectorAll("figure.chart svg text")]
          .filter((t) => (t.textContent ?? "").trim() !== "" && t.closest('svg[class$="-ramp"]') === null)
          .map((t) => ({ ...box(t, t.textContent ?? ""), chart: t.closest("figure.chart")?.id ?? "" })),
        charts: [...document.querySelectorAll("figure.chart")].map((f) => box(f, f.id)),
      };
    });
    expect(charts.map((c) => c.what)).toEqual(
      expect.arrayContaining([
        "net-value",
        "predictions",
        "sensitivity",
        "inversion",
        "mode-mix",
        "deadline-misses",
        "peer-latency",
        "group-latency",
        "peer-work",
        "speculate-over-time",
      ]),
    );
    expect(legends.length).toBeGreaterThan(4);
    const overlap = (a: Box, b: Box): boolean =>
      a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
    const clashes: string[] = [];
    legends.forEach((a, i) => {
      for (const b of legends.slice(i + 1)) if (overlap(a, b)) clashes.push(`${a.what} × ${b.what}`);
      for (const t of texts)
        if (t.chart === a.chart && overlap(a, t)) clashes.push(`${a.what} × text "${t.what}"`);
      const chart = charts.find((c) => c.what === a.chart);
      if (a.x < 0 || a.x + a.w > WIDTH) clashes.push(`${a.what} past the page's edge`);
      if (chart !== undefined && (a.x < chart.x - 0.5 || a.x + a.w > chart.x + chart.w + 0.5))
        clashes.push(`${a.what} clipped by its chart`);
    });
    expect(clashes).toEqual([]);
  });

  it("keeps the text report, collapsed, after the charts", async () => {
    const open = await opened.page.evaluate(() => document.querySelector("details")?.open);
    expect(open).toBe(false);
    const pre = await opened.page.locator("details pre").textContent();
    expect(pre).toContain("VERDICT");
    expect(pre).toContain("sensitivity: net value per fan-out over the weight grid");
  });
});
