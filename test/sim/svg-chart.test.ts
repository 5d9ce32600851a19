import { describe, expect, it } from "vitest";
import { lineChart } from "../../src/sim/svg-chart.js";

describe("lineChart", () => {
  it("renders a self-contained SVG with every series, escaped labels and a reference line", () => {
    const svg = lineChart({
      title: "Stability <vs> load",
      xLabel: "ρ",
      yLabel: "backlog",
      yLog: true,
      hLines: [{ y: 120, label: "limit" }],
      series: [
        {
          name: "MABP",
          points: [
            [0.2, 5],
            [0.8, 40],
          ],
        },
        {
          name: "BP & co",
          points: [
            [0.2, 8],
            [0.8, 0],
            [1, Number.NaN],
          ],
        },
      ],
    });
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.trim().endsWith("</svg>")).toBe(true);
    expect(svg).toContain("Stability &lt;vs&gt; load");
    expect(svg).toContain("BP &amp; co");
    expect(svg).toContain("limit");
    expect(svg).not.toMatch(/NaN|Infinity|http:\/\/(?!www\.w3\.org)/);
    expect(svg.match(/<path /g)).toHaveLength(2);
  });

  it("copes with a single point and an empty series", () => {
    const svg = lineChart({
      title: "t",
      xLabel: "x",
      yLabel: "y",
      series: [
        { name: "a", points: [[1, 1]] },
        { name: "b", points: [] },
      ],
    });
    expect(svg).not.toMatch(/NaN/);
  });
});
