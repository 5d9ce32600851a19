/**
 * Who speculates where: the mode mix of each policy at each coordinator (shares of its fan-outs),
 * with the `error` share explained from the failed calls' status codes; and the deadline misses per
 * coordinator and policy (by mode where the report counts them so).
 */
import * as Plot from "@observablehq/plot";
import { chartBlock, coordinatorLabel, facetTitles, MODE_COLORS, MODES, pct, policyColor } from "./charts.js";
import { coordinatorsByBudget } from "./report-view.js";
import type { ReportView } from "./report-view.js";

interface Segment {
  readonly coordinator: string;
  readonly policy: string;
  readonly mode: string;
  readonly share: number;
}

export function modeMixChart(r: ReportView): string {
  const policies = Object.keys(r.policies);
  const coords = coordinatorsByBudget(r);
  const segs: Segment[] = [];
  for (const c of coords)
    for (const p of policies) {
      const mix = r.by_coordinator[p]?.[c]?.mode_mix;
      if (mix === undefined) continue;
      for (const m of MODES)
        segs.push({ coordinator: coordinatorLabel(r, c), policy: p, mode: m, share: mix[m] ?? 0 });
    }
  return chartBlock(
    "mode-mix",
    "Mode mix per coordinator: what each policy did with its fan-outs",
    {
      width: 680,
      height: 50 + coords.length * (policies.length * 24 + 34),
      marginLeft: 100,
      marginTop: 26,
      marginRight: 20,
      marginBottom: 42,
      x: {
        domain: [0, 1],
        label: "share of the coordinator's requests →",
        labelAnchor: "center",
        tickFormat: "%",
      },
      y: { domain: policies, label: null },
      fy: { domain: coords.map((c) => coordinatorLabel(r, c)), axis: null, padding: 0.3 },
      color: { domain: [...MODES], range: MODE_COLORS, legend: true },
      marks: [
        Plot.barX(
          segs,
          Plot.stackX({
            fy: "coordinator",
            y: "policy",
            x: "share",
            fill: "mode",
            order: [...MODES],
            insetTop: 3,
            insetBottom: 3,
          }),
        ),
        Plot.text(
          segs,
          Plot.stackX({
            fy: "coordinator",
            y: "policy",
            x: "share",
            order: [...MODES],
            text: (d: Segment) => (d.share >= 0.08 ? pct(d.share) : ""),
            fill: (d: Segment) => (d.mode === "speculate" || d.mode === "error" ? "white" : "#111"),
          }),
        ),
        facetTitles(
          coords.map((c) => coordinatorLabel(r, c)),
          -96,
          -18,
        ),
      ],
    },
    errorCaption(r, coords),
  );
}

/** What `error` means, and at which coordinators it was large, from the failed calls' codes. */
export function errorCaption(r: ReportView, coords: readonly string[]): string {
  const base =
    "speculate / synchronous / degrade: the mode the coordinator chose. error: the call failed at the caller " +
    "(no reply within the caller's budget, or a gRPC failure); the caller falls back to its prior and the value model counts a deadline miss.";
  const notes: string[] = [];
  for (const c of coords) {
    let failed = 0;
    let total = 0;
    const codes = new Map<string, number>();
    for (const p of Object.keys(r.policies)) {
      const s = r.by_coordinator[p]?.[c];
      if (s === undefined) continue;
      total += s.fanouts;
      failed += Math.round((s.mode_mix.error ?? 0) * s.fanouts);
      for (const [code, n] of Object.entries(r.failures?.[p]?.[c] ?? {}))
        codes.set(code, (codes.get(code) ?? 0) + n);
    }
    if (total === 0 || failed / total < 0.05) continue;
    const why = [...codes.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([code, n]) => `${code} ${n}`)
      .join(", ");
    notes.push(
      `at ${c} (${r.series.budgets[c]} ms) ${pct(failed / total)} of calls failed over all policies${why === "" ? "" : ` (${why})`}`,
    );
  }
  return notes.length === 0
    ? base
    : `${base} Here ${notes.join("; ")}. DEADLINE_EXCEEDED: the reply reached the caller after its budget.`;
}

interface Miss {
  readonly coordinator: string;
  readonly policy: string;
  readonly mode: string;
  readonly share: number;
}

export function deadlineMissChart(r: ReportView): string {
  const policies = Object.keys(r.policies);
  const coords = coordinatorsByBudget(r);
  const rows: Miss[] = [];
  let byMode = false;
  for (const c of coords)
    for (const p of policies) {
      const s = r.by_coordinator[p]?.[c];
      if (s === undefined || s.fanouts === 0) continue;
      const modes = s.deadline_misses_by_mode;
      if (modes !== undefined) {
        byMode = true;
        for (const m of MODES)
          rows.push({
            coordinator: coordinatorLabel(r, c),
            policy: p,
            mode: m,
            share: (modes[m] ?? 0) / s.fanouts,
          });
      } else
        rows.push({
          coordinator: coordinatorLabel(r, c),
          policy: p,
          mode: "all",
          share: s.deadline_misses / s.fanouts,
        });
    }
  const top = Math.max(0.05, ...sumBy(rows));
  return chartBlock(
    "deadline-misses",
    byMode ? "Deadline misses per coordinator, by mode" : "Deadline misses per coordinator",
    {
      width: 580,
      height: 50 + coords.length * (policies.length * 22 + 34),
      marginLeft: 100,
      marginTop: 26,
      marginRight: 40,
      marginBottom: 42,
      x: {
        domain: [0, Math.min(1, top * 1.2)],
        label: "share of the coordinator's requests that missed →",
        labelAnchor: "center",
        tickFormat: "%",
        grid: true,
      },
      y: { domain: policies, label: null },
      fy: { domain: coords.map((c) => coordinatorLabel(r, c)), axis: null, padding: 0.3 },
      color: byMode ? { domain: [...MODES], range: MODE_COLORS, legend: true } : policyColor(policies),
      marks: [
        Plot.barX(
          rows,
          Plot.stackX({
            fy: "coordinator",
            y: "policy",
            x: "share",
            fill: byMode ? "mode" : "policy",
            order: [...MODES],
            insetTop: 3,
            insetBottom: 3,
          }),
        ),
        Plot.text(
          rows,
          Plot.groupY(
            { x: "sum", text: (xs: number[]) => pct(xs.reduce((a, b) => a + b, 0)) },
            { fy: "coordinator", y: "policy", x: "share", text: "share", dx: 4, textAnchor: "start" },
          ),
        ),
        facetTitles(
          coords.map((c) => coordinatorLabel(r, c)),
          -96,
          -18,
        ),
      ],
    },
    "A miss: the coordinator replied after the fan-out's deadline, the caller saw the reply after its budget, or the call failed." +
      (policies.includes("never")
        ? " never issues no fan-out at all, so its misses are the floor the machine itself sets (scheduling delay of the processes)."
        : ""),
  );
}

function sumBy(rows: readonly Miss[]): number[] {
  const m = new Map<string, number>();
  for (const r of rows)
    m.set(`${r.coordinator}|${r.policy}`, (m.get(`${r.coordinator}|${r.policy}`) ?? 0) + r.share);
  return [...m.values()];
}
