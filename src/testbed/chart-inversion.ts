/**
 * The inversion the founding note predicts — commit rate down, decision-relevant commit rate up —
 * drawn as small multiples, one rate per panel on its own axis from 0, so that a rate of 0.02 is as
 * readable as one of 0.9. Panels for rates a report.json lacks are left out.
 */
import * as Plot from "@observablehq/plot";
import { fixed, multiplesBlock, policyColor } from "./charts.js";
import type { ReportView, StatsView } from "./report-view.js";

interface Panel {
  readonly title: string;
  readonly read: (s: StatsView) => number | null | undefined;
  /** A reference value drawn as a dashed line (the note's observed 71%). */
  readonly reference?: { readonly value: number; readonly label: string };
  /** What a missing value means in this panel. */
  readonly none: string;
}

const PANELS: readonly Panel[] = [
  {
    title: "commit rate per speculative branch",
    read: (s) => s.commit_rate,
    reference: { value: 0.71, label: "note: 71%" },
    none: "n/a (no speculation)",
  },
  {
    title: "commit rate per speculative fan-out",
    read: (s) => s.speculation_commit_rate,
    reference: { value: 0.71, label: "note: 71%" },
    none: "n/a (no speculation)",
  },
  {
    title: "decision-relevant commit rate (fan-out level)",
    read: (s) => s.fanout_decision_relevant_commit_rate,
    none: "n/a (nothing committed)",
  },
  {
    title: "pivotal commit rate (leave-one-out per branch)",
    read: (s) => s.pivotal_commit_rate ?? s.decision_relevant_commit_rate,
    none: "n/a (nothing committed)",
  },
  {
    title: "abandoned fan-outs whose answers would flip the action",
    read: (s) => s.would_flip_share_of_abandoned,
    none: "n/a (none abandoned)",
  },
  {
    title: "cut-off branches that would flip the action alone",
    read: (s) => s.pivotal_share_of_cut ?? s.high_value_share_of_lost,
    none: "n/a (nothing cut off)",
  },
];

interface Bar {
  readonly policy: string;
  readonly value: number | null;
}

export function inversionChart(r: ReportView): string {
  const policies = Object.keys(r.policies);
  const panels = PANELS.filter((p) => policies.some((q) => p.read(r.policies[q]!) !== undefined));
  const figures = panels.map((panel) => {
    const bars: Bar[] = policies.map((p) => ({ policy: p, value: panel.read(r.policies[p]!) ?? null }));
    const max = Math.max(0, ...bars.map((b) => b.value ?? 0), panel.reference?.value ?? 0);
    const top = max === 0 ? 0.01 : max * 1.35;
    const digits = top < 0.1 ? 3 : 2;
    return {
      title: panel.title,
      width: 400,
      height: 40 + policies.length * 30,
      marginLeft: 96,
      marginRight: 16,
      x: { domain: [0, top], label: null, ticks: 4, grid: true },
      y: { domain: policies, label: null },
      color: policyColor(policies),
      marks: [
        Plot.barX(
          bars.filter((b) => b.value !== null),
          { x: "value", y: "policy", fill: "policy", insetTop: 4, insetBottom: 4 },
        ),
        Plot.text(bars, {
          x: (b: Bar) => b.value ?? 0,
          y: "policy",
          text: (b: Bar) => (b.value === null ? panel.none : fixed(b.value, digits)),
          dx: 4,
          textAnchor: "start",
          fill: "#222",
        }),
        ...(panel.reference === undefined
          ? []
          : [
              Plot.ruleX([panel.reference.value], { stroke: "#222", strokeDasharray: "4 3" }),
              Plot.text([panel.reference.label], {
                x: panel.reference.value,
                frameAnchor: "top",
                dy: -2,
                lineAnchor: "bottom",
                fontSize: 10,
              }),
            ]),
        Plot.ruleX([0], { stroke: "#333" }),
      ],
    } satisfies Plot.PlotOptions;
  });
  return multiplesBlock(
    "inversion",
    "The inversion: each rate on its own scale",
    figures,
    "The founding note predicts that under the rule the commit rate drops while the decision-relevant commit rate rises. " +
      "Each panel has its own axis from 0. Decision-relevant (fan-out level): a committed speculative fan-out whose action differs from the local decision without fanning out. " +
      "Pivotal (leave-one-out): removing that one committed answer would change the action; with many voters a single answer is rarely pivotal, so this rate is small under every policy. " +
      "Would flip: the abandoned fan-out's cut-off answers together with those it used would have changed the action. " +
      "n/a: nothing to count (no speculative fan-out, no committed answer, nothing cut off).",
  );
}
