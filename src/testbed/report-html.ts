/**
 * report.html: one self-contained page (static SVG charts rendered at report time, no script, no
 * network). It opens with the verdict and the deciding chart, net value per coordinator; then the
 * sensitivity grid, the inversion, who speculates where, latency against the budgets and the work
 * lost; the text report last, collapsed.
 */
import { esc } from "../sim/svg-chart.js";
import { inversionChart } from "./chart-inversion.js";
import { groupLatencyChart, peerLatencyChart, speculateOverTimeChart } from "./chart-latency.js";
import { deadlineMissChart, modeMixChart } from "./chart-modes.js";
import { netValueChart } from "./chart-net-value.js";
import { sensitivityChart } from "./chart-sensitivity.js";
import { peerWorkChart } from "./chart-work.js";
import { fixed, pct } from "./charts.js";
import { formatTable } from "./report-table.js";
import { coordinatorsByBudget } from "./report-view.js";
import type { ReportView } from "./report-view.js";
import type { Report } from "./report.js";
import { verdict } from "./verdict.js";
import type { Verdict } from "./verdict.js";
import type { Outcome } from "./predictions.js";

const STYLE = `
body{font-family:system-ui,-apple-system,'Segoe UI','DejaVu Sans',sans-serif;margin:0;color:#111;background:#fff}
main{max-width:1360px;margin:0 auto;padding:16px 20px 40px;box-sizing:border-box}
h1{font-size:22px;margin:4px 0 2px}
.meta{color:#555;font-size:13px;margin:0 0 12px}
#verdict{border-left:5px solid #1f5fbf;background:#f4f7fc;padding:10px 16px;margin:0 0 16px}
#verdict h2{font-size:15px;margin:0 0 4px;text-transform:uppercase;letter-spacing:.04em;color:#1f5fbf}
#verdict-text{font-size:15px;line-height:1.5;margin:0;max-width:1280px}
h2{font-size:18px;margin:28px 0 8px}
.row{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.chart{margin:0;max-width:100%;width:fit-content}
.chart h3{font-size:15px;margin:0 0 6px}
.chart figcaption{font-size:12.5px;color:#444;width:0;min-width:100%;line-height:1.45;margin-top:4px}
.chart.missing p{color:#777;font-style:italic}
.multiples{display:flex;flex-wrap:wrap;gap:8px 20px}
.multiples figure{margin:0}
.multiples h2{font-size:13px;font-weight:600;margin:0}
.multiples h3{font-size:12.5px;font-weight:400;color:#333;margin:0 0 2px}
.scorecard{border-collapse:collapse;font-size:13.5px;width:470px}
.scorecard td{padding:5px 8px;border-bottom:1px solid #e4e4e4;vertical-align:top}
.outcome{font-weight:700;white-space:nowrap}
.held{color:#1b7a2b}.did-not-hold{color:#b3261e}.not-shown-by-this-run{color:#8a6d00}.not-measured{color:#777}
table.numbers{border-collapse:collapse;font-size:13px}
table.numbers th,table.numbers td{padding:4px 10px;border-bottom:1px solid #e4e4e4;text-align:right}
table.numbers th:first-child,table.numbers td:first-child{text-align:left}
details{margin-top:32px}
summary{cursor:pointer;font-weight:600}
pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:12px;max-width:100%;box-sizing:border-box}
`;

export function renderHtml(r: Report): string {
  return renderReportView(r, formatTable(r));
}

/** The page for any report.json shape the readers understand; `text` is the report.txt shown at the end. */
export function renderReportView(r: ReportView, text: string): string {
  const v = verdict(r);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>tailswarm testbed — ${esc(r.scenario)}</title><style>${STYLE}</style></head><body><main>
<h1>tailswarm testbed — ${esc(r.scenario)}</h1>
<p class="meta">Seed ${r.seed}, ${r.duration_s} s measured${r.interrupted ? " (<b>interrupted: partial results</b>)" : ""}; measured fan-out to all peers p50 ${fixed(r.measured.fanout_p50_ms, 1)} ms, p99 ${fixed(r.measured.fanout_p99_ms, 1)} ms. Fields and the value model: docs/value-model.md; every number: report.json.</p>
<section id="verdict"><h2>Verdict</h2><p id="verdict-text">${v.html}</p></section>
<div class="row">${netValueChart(r)}${scorecard(v)}</div>
<h2>Does the lead hold as the weights change?</h2>
${sensitivityChart(r)}
<h2>The inversion</h2>
${inversionChart(r)}
<h2>Who speculates where</h2>
<div class="row">${modeMixChart(r)}${deadlineMissChart(r)}</div>
<h2>Latency against the budgets</h2>
${peerLatencyChart(r)}
${estimatesTable(r)}
${groupLatencyChart(r)}
<h2>Work lost, and speculation over time</h2>
<div class="row">${peerWorkChart(r)}</div>
${speculateOverTimeChart(r)}
<details><summary>Text report (report.txt)</summary><pre>${esc(text)}</pre></details>
</main></body></html>
`;
}

function scorecard(v: Verdict): string {
  if (v.predictions.length === 0) return "";
  const cls = (o: Outcome): string => o.replace(/ /g, "-");
  const rows = v.predictions
    .map(
      (p) => `<tr><td class="outcome ${cls(p.outcome)}">${esc(p.outcome)}</td><td>${esc(p.claim)}</td></tr>`,
    )
    .join("");
  return `<figure class="chart" id="predictions"><h3>The founding note's predictions, on this run</h3><table class="scorecard">${rows}</table><figcaption>The verdict gives the numbers behind each line. "Not shown by this run": the run's interval covers 0, or the report gives the figure no interval.</figcaption></figure>`;
}

/** What each coordinator believed against what was measured. */
function estimatesTable(r: ReportView): string {
  const coords = coordinatorsByBudget(r);
  const est = r.measured.coordinator_estimates;
  const lbShown = coords.some((c) => est[c]?.p99_lower_bound_share !== undefined);
  const ledger = Object.keys(r.policies).filter((p) =>
    coords.some((c) => r.by_coordinator[p]?.[c]?.abandon_cost_estimate_ms !== undefined),
  );
  const head = [
    "coordinator",
    "budget",
    "its p50 estimate",
    "its p99 estimate",
    "from observed fan-outs",
    ...(lbShown ? ["p50 a lower bound", "p99 a lower bound"] : []),
    ...ledger.map((p) => `abandon cost, ${p}'s ledger`),
  ];
  const share = (x: number | null | undefined): string => (x === null || x === undefined ? "n/a" : pct(x));
  const rows = coords.map((c) => {
    const e = est[c];
    const cells = [
      c,
      `${r.series.budgets[c]} ms`,
      e?.p50_ms === null || e === undefined ? "n/a" : `${fixed(e.p50_ms, 1)} ms`,
      e?.p99_ms === null || e === undefined ? "n/a" : `${fixed(e.p99_ms, 1)} ms`,
      share(e?.observed_share),
      ...(lbShown ? [share(e?.p50_lower_bound_share), share(e?.p99_lower_bound_share)] : []),
      ...ledger.map((p) => {
        const x = r.by_coordinator[p]?.[c]?.abandon_cost_estimate_ms;
        return x === null || x === undefined ? "n/a" : `${fixed(x, 1)} ms`;
      }),
    ];
    return `<tr>${cells.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`;
  });
  return `<figure class="chart" id="estimates"><h3>What each coordinator believed (median over its decisions), against the measured fan-out p50 ${fixed(r.measured.fanout_p50_ms, 1)} ms and p99 ${fixed(r.measured.fanout_p99_ms, 1)} ms</h3><table class="numbers"><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${rows.join("")}</table></figure>`;
}
