/**
 * The terminal report of a testbed run: the verdict first (the same paragraph report.html opens
 * with), then the policies side by side and the sensitivity grid.
 */
import type { PairedDifference } from "./paired-difference.js";
import { missLines } from "./deadline-misses.js";
import type { Report } from "./report.js";
import type { IntervalRate } from "./seed-observation.js";
import { verdict } from "./verdict.js";
import { p99IntervalText } from "./verdict-format.js";

const ROWS: readonly [string, string][] = [
  ["fanouts", "fan-outs"],
  ["speculative_branches", "speculative branches"],
  ["commit_rate", "commit rate (per branch)"],
  ["speculation_commit_rate", "commit rate (per speculative fan-out)"],
  ["commits_per_fanout", "commits per fan-out"],
  ["fanout_decision_relevant_commit_rate", "decision-relevant commit rate (per committed fan-out)"],
  ["pivotal_commit_rate", "pivotal commit rate (leave-one-out per branch)"],
  ["info_gain_per_committed_branch", "info gain per committed branch (bits)"],
  ["would_flip_share_of_abandoned", "abandoned fan-outs whose cut-off answers would flip"],
  ["pivotal_share_of_cut", "cut-off branches that would flip alone"],
  ["abandon_cost_ms_per_fanout", "abandon cost per fan-out (ms)"],
  ["late_lost_work_ms_per_fanout", "late lost work per fan-out (ms)"],
  ["peer_work_used_ms_per_fanout", "peer work used per fan-out (ms)"],
  ["peer_work_cut_ms_per_fanout", "peer work cut off per fan-out (ms)"],
  ["peer_work_redundant_ms_per_fanout", "peer work redundant per fan-out (ms)"],
  ["thrown_ms_per_fanout", "continuation thrown away per fan-out (ms)"],
  ["overlap_ms_per_fanout", "continuation overlapped per fan-out (ms)"],
  ["completion_ms_mean", "request -> continuation done, mean (ms)"],
  ["deadline_misses", "deadline misses"],
  ["accuracy", "accuracy"],
  ["accuracy_during_events", "accuracy during gateway events"],
  ["net_value_per_fanout", "net value per fan-out"],
];

export function formatTable(r: Report): string {
  const policies = Object.keys(r.policies);
  const out: string[] = [];
  const m = r.measured;
  out.push("VERDICT", ...wrap(verdict(r).text, 100), "");
  out.push(
    `scenario ${r.scenario} (seed ${r.seed}), ${r.duration_s} s measured${r.interrupted ? " — INTERRUPTED, partial" : ""}`,
    `measured fan-out to all peers: p50 ${m.fanout_p50_ms} ms, p99 ${m.fanout_p99_ms} ms (${m.fanout_p99_interval_ms === undefined ? "" : `${p99IntervalText(m.fanout_p99_interval_ms, m.fanout_samples)}; `}${m.fanout_samples} direct fan-outs, ${m.fanout_censored} censored); gateway events during ${m.event_share === null ? "n/a" : pct(m.event_share)} of requests`,
  );
  const est = Object.entries(m.coordinator_estimates)
    .map(
      ([c, e]) =>
        `${c} (budget ${r.series.budgets[c]} ms): p50 ${e.p50_ms ?? "n/a"}, p99 ${e.p99_ms ?? "n/a"}` +
        (e.observed_share === null || e.observed_share === undefined
          ? ""
          : `, ${pct(e.observed_share)} observed`) +
        (e.p99_lower_bound_share === null || e.p99_lower_bound_share === undefined
          ? ""
          : `, p99 a lower bound on ${pct(e.p99_lower_bound_share)}`),
    )
    .join("; ");
  out.push(`coordinators' own fan-out estimates (median): ${est}`);
  const loops = Object.entries(r.coordinator_event_loop_delay_ms ?? {})
    .filter(([, l]) => l.readings > 0)
    .map(([c, l]) => `${c} p50 ${l.p50_ms ?? "n/a"}, p99 ${l.p99_ms ?? "n/a"}, max ${l.max_ms ?? "n/a"}`);
  if (loops.length > 0) out.push(`coordinators' event-loop delay while measuring (ms): ${loops.join("; ")}`);
  out.push("");
  const w0 = Math.max(...ROWS.map(([, l]) => l.length));
  const w = Math.max(12, ...policies.map((p) => p.length + 1));
  out.push(`${"".padEnd(w0)} ${policies.map((p) => p.padStart(w)).join("")}`);
  for (const [key, label] of ROWS) {
    const cells = policies.map((p) =>
      cell((r.policies[p] as unknown as Record<string, unknown>)[key]).padStart(w),
    );
    out.push(`${label.padEnd(w0)} ${cells.join("")}`);
  }
  const rvn = r.rule_vs_naive;
  if (rvn !== null && rvn !== undefined) {
    out.push(
      "",
      `p99-boundary - naive-p50, per request on the same ${rvn.pairs} requests (mean [95% interval]):`,
      `  commits per fan-out            ${interval(rvn.commits_per_fanout)}`,
      `  abandon cost per fan-out (ms)  ${interval(rvn.abandon_cost_ms_per_fanout)}`,
      `  net value per fan-out          ${interval(rvn.net_value_per_fanout)}`,
      `  decision-relevant commit rate  ${interval(rvn.fanout_decision_relevant_commit_rate ?? null, 3)}`,
    );
  }
  out.push(...observationLines(r));
  out.push("", "mode mix by coordinator (speculate/synchronous/degrade/error):");
  for (const p of policies) {
    const parts = Object.entries(r.by_coordinator[p] ?? {}).map(([c, s]) => {
      const x = s.mode_mix;
      return `${c} ${pct(x.speculate ?? 0)}/${pct(x.synchronous ?? 0)}/${pct(x.degrade ?? 0)}/${pct(x.error ?? 0)}`;
    });
    out.push(`  ${p.padEnd(14)} ${parts.join("   ")}`);
  }
  const misses = r.deadline_misses;
  if (misses !== undefined) {
    out.push(
      "",
      "deadline misses by mode (calls.jsonl and report.json's deadline_misses: where each one's time went):",
    );
    for (const c of Object.keys(r.series.budgets)) out.push(...missLines(misses, c, policies));
  }
  out.push("", "sensitivity: net value per fan-out over the weight grid");
  const keys = ["correct", "latencyPerMs", "abandonPerMs", "miss"] as const;
  out.push(
    `  ${keys.map((k) => k.padStart(13)).join("")}  ${policies.map((p) => p.padStart(w)).join("")}  ${"rule - naive [95%]".padEnd(30)}  best`,
  );
  for (const row of r.sensitivity) {
    const ws = keys.map((k) => String(row.weights[k]).padStart(13)).join("");
    const vs = policies.map((p) => (row.net_value_per_fanout[p] ?? NaN).toFixed(2).padStart(w)).join("");
    out.push(`  ${ws}  ${vs}  ${interval(row.rule_minus_naive ?? null).padEnd(30)}  ${row.best.join(",")}`);
  }
  const checks = Object.entries(r.checks);
  if (checks.length > 0) {
    out.push("", "the founding note's predictions, on the measured numbers:");
    for (const [k, v] of checks) out.push(`  ${v === null ? "n/a " : v ? "yes " : "NO  "} ${k}`);
  }
  if (r.processes !== null) {
    const pr = r.processes;
    out.push(
      "",
      `processes: ${pr.peers} peers + ${pr.coordinators} coordinator nodes${pr.node_processes !== undefined ? ` in ${pr.node_processes} processes` : ""}; startup ${(pr.startup_ms_all / 1000).toFixed(1)} s (slowest node ${(pr.startup_ms_max / 1000).toFixed(1)} s); crashed ${pr.crashed.length}, killed after grace ${pr.killed_after_grace.length}, left running ${pr.left_running.length}`,
    );
    if (typeof pr.cpu_s_measured === "number" && pr.cores !== undefined && r.duration_s > 0) {
      const share = pr.cpu_s_measured / (r.duration_s * pr.cores);
      out.push(
        `the swarm's own CPU while measuring: ${pr.cpu_s_measured.toFixed(1)} s over ${r.duration_s.toFixed(1)} s on ${pr.cores} cores (${pct(share)} of the machine; the rest of the machine's load is not the testbed's)`,
      );
    }
  }
  return out.join("\n") + "\n";
}

/** Words to lines of at most `width` characters (a longer word stands alone). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (word === "") continue;
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(line);
  return lines;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "n/a";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) >= 100 ? 1 : 3);
  return typeof v === "string" ? v : JSON.stringify(v);
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function interval(d: PairedDifference | null, digits = 2): string {
  return d === null
    ? "n/a"
    : `${d.mean.toFixed(digits)} [${d.lo95.toFixed(digits)}, ${d.hi95.toFixed(digits)}]`;
}

/** The founding note's observation per coordinator where a policy speculated (rate [95%], n). */
function observationLines(r: Report): string[] {
  const obs = r.seed_observation ?? {};
  const rows: string[] = [];
  const show = (v: IntervalRate): string =>
    v.value === null
      ? "n/a"
      : `${v.value.toFixed(3)} [${v.lo95!.toFixed(3)}, ${v.hi95!.toFixed(3)}] of ${v.n}`;
  for (const [policy, byCoord] of Object.entries(obs))
    for (const [c, o] of Object.entries(byCoord)) {
      if (o.speculative_fanout_commit_rate.n === 0) continue;
      rows.push(
        `  ${policy.padEnd(14)} ${c.padEnd(12)} commit ${show(o.speculative_fanout_commit_rate)}; decision-relevant of committed ${show(o.decision_relevant_share_of_committed)}; would flip of abandoned ${show(o.would_flip_share_of_abandoned)}`,
      );
    }
  if (rows.length === 0) return [];
  return [
    "",
    "the founding note's observation, per speculative fan-out (rate [95% interval] of n fan-outs):",
    ...rows,
  ];
}
