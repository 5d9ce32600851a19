/**
 * Peer work per fan-out, in ms: where the report splits it, used (the answer was in the deciding set)
 * against wasted (cut off, or redundant after the decision); otherwise the two kinds of lost work it
 * counts, abandon cost (abandoned branches and discarded speculative work) and late lost work.
 */
import * as Plot from "@observablehq/plot";
import { chartBlock } from "./charts.js";
import type { ReportView, StatsView } from "./report-view.js";

interface Part {
  readonly policy: string;
  readonly kind: string;
  readonly ms: number;
}

export function peerWorkChart(r: ReportView): string {
  const policies = Object.keys(r.policies);
  const split = policies.some((p) => r.policies[p]!.peer_work_used_ms_per_fanout !== undefined);
  const kinds = split ? ["used", "wasted: cut off", "wasted: redundant"] : ["abandon cost", "late lost work"];
  const read = (s: StatsView): number[] =>
    split
      ? [
          s.peer_work_used_ms_per_fanout ?? 0,
          s.peer_work_cut_ms_per_fanout ?? 0,
          s.peer_work_redundant_ms_per_fanout ?? 0,
        ]
      : [s.abandon_cost_ms_per_fanout, s.late_lost_work_ms_per_fanout];
  const parts: Part[] = policies.flatMap((policy) =>
    read(r.policies[policy]!).map((ms, i) => ({ policy, kind: kinds[i]!, ms })),
  );
  const colors = split ? ["#2a9d3a", "#d62728", "#f4a582"] : ["#d62728", "#f4a582"];
  return chartBlock(
    "peer-work",
    split ? "Peer work per fan-out: used and wasted (ms)" : "Work lost per fan-out (ms)",
    {
      width: 600,
      height: 60 + policies.length * 32,
      marginLeft: 100,
      marginRight: 60,
      marginBottom: 42,
      x: { label: "ms per fan-out →", labelAnchor: "center", grid: true },
      y: { domain: policies, label: null },
      color: { domain: kinds, range: colors, legend: true },
      marks: [
        Plot.barX(
          parts,
          Plot.stackX({ y: "policy", x: "ms", fill: "kind", order: kinds, insetTop: 4, insetBottom: 4 }),
        ),
        Plot.text(
          parts,
          Plot.groupY(
            { x: "sum", text: (xs: number[]) => xs.reduce((a, b) => a + b, 0).toFixed(0) },
            { y: "policy", x: "ms", text: "ms", dx: 4, textAnchor: "start" },
          ),
        ),
        Plot.ruleX([0], { stroke: "#333" }),
      ],
    },
    split
      ? "Every peer-millisecond counted once, the same way whatever the mode: used when its answer was in the deciding set, wasted when cut off or finished after the decision was settled."
      : "Abandon cost: peers' work on abandoned speculative branches plus the coordinator's speculative work thrown away. Late lost work: a synchronous fan-out's branches still running at its deadline. Both are charged at the same weight in the value model.",
  );
}
