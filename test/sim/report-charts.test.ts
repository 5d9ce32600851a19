import { DOMParser } from "linkedom";
import { describe, expect, it } from "vitest";
import { PAPER_PROP3, PAPER_SWEEPS, PAPER_TABLE1 } from "../../src/sim/paper.js";
import { simCharts } from "../../src/sim/report-charts.js";
import type { SimReport, Table1Row } from "../../src/sim/report.js";

const row = (stable: number): Table1Row => ({
  stable_load: stable,
  stable_load_sd: 0,
  penalty: 2,
  penalty_sd: 0,
  p95_delay: 150,
  p95_delay_sd: 0,
  hit_ratio: 0.6,
  hit_ratio_sd: 0,
  churn: 0.5,
  churn_sd: 0,
  work_per_unit: 2,
  downstream_per_request: 1.5,
  mean_backlog: 100,
  stable_at_rho0: 0,
});

// JSQ and BP on the very same curve: the chart must still draw them apart.
const same: [number, number][] = [
  [0.2, 5],
  [0.4, 15],
  [0.6, 800],
];
const crafted: SimReport = {
  meta: {},
  table1: { JSQ: row(0.4), BP: row(0.4), MABP: row(0.8) },
  extras: {},
  prop3: { "1": 0.01, "4": 1.5, "8": 3.5, "16": 7.5 },
  prop3_bound: { "1": 0, "4": 1.5, "8": 3.5, "16": 7.5 },
  sweeps: {
    load: {
      JSQ: same,
      BP: same,
      MABP: [
        [0.2, 4],
        [0.8, 50],
        [1.0, 900],
      ],
    },
    beta: [
      {
        beta: 0.05,
        mabp_penalty: 2,
        costbp_penalty: 2.5,
        penalty_gain_pct: 20,
        p95_gain_pct: 25,
        mabp_hit: 0.9,
      },
      {
        beta: 0.5,
        mabp_penalty: 2,
        costbp_penalty: 2.4,
        penalty_gain_pct: 16,
        p95_gain_pct: 80,
        mabp_hit: 0.95,
      },
    ],
    nu: [],
    skew: [],
  },
  paper: { table1: PAPER_TABLE1, prop3: PAPER_PROP3, sweeps: PAPER_SWEEPS },
};

function parse(svg: string) {
  const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
  return doc.documentElement;
}

describe("sim charts", () => {
  const charts = simCharts(crafted, [0.05, 0.1, 0.5]);

  it("writes three standalone SVG files, with no script, link or non-number", () => {
    expect(Object.keys(charts).sort()).toEqual([
      "gain-vs-beta.svg",
      "prop3-gap.svg",
      "stability-vs-load.svg",
    ]);
    for (const svg of Object.values(charts)) {
      expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(svg).not.toMatch(/NaN|Infinity|<script|href=/);
      expect(parse(svg).tagName.toLowerCase()).toBe("svg");
    }
  });

  it("draws each policy in its own panel, so JSQ and BP stay apart where their curves coincide", () => {
    const svg = charts["stability-vs-load.svg"]!;
    const titles = [...parse(svg).querySelectorAll("text")].map((t) => t.textContent);
    for (const p of ["JSQ", "BP", "MABP"]) expect(titles.filter((t) => t === p)).toHaveLength(1);
    // one highlighted curve per panel, and the others behind it in grey
    expect(
      svg.match(/stroke="#1f5fbf"[^>]*stroke-width="2.2"|stroke-width="2.2"[^>]*stroke="#1f5fbf"/g)?.length ??
        0,
    ).toBeGreaterThan(0);
  });

  it("marks the paper's stable load beside ours, and the paper's β range and Proposition 3 points", () => {
    const stab = charts["stability-vs-load.svg"]!;
    expect(stab).toContain(`paper ${PAPER_TABLE1.JSQ!.stable_load}`);
    expect(stab).toContain(`paper ${PAPER_TABLE1.BP!.stable_load}`);
    expect(stab).toContain(`paper ${PAPER_TABLE1.MABP!.stable_load}`);
    expect(stab).toContain("ours 0.4");
    const beta = charts["gain-vs-beta.svg"]!;
    expect(beta).toContain(`${PAPER_SWEEPS.betaGainPercent[0]}%`);
    expect(beta).toContain(`${PAPER_SWEEPS.betaGainPercent[1]}%`);
    expect(beta).toContain("paper: penalty gain");
    const prop3 = charts["prop3-gap.svg"]!;
    expect(prop3).toContain("paper");
    expect(prop3).toContain("bound (K − 1)/2");
  });
});
