/** The replicated scenario's report as a terminal table: one block per budget, then its goal check. */
import type { PairedDifference } from "../paired-difference.js";
import type { ReplicatedReport } from "./report.js";

const f = (v: number | null, lb = false): string => (v === null ? "—" : `${lb ? "≥" : ""}${v.toFixed(1)}`);
const interval = (d: PairedDifference | null, digits = 1): string =>
  d === null ? "—" : `${d.mean.toFixed(digits)} [${d.lo95.toFixed(digits)}, ${d.hi95.toFixed(digits)}]`;

export function formatReplicated(r: ReplicatedReport): string {
  const lines: string[] = [];
  lines.push(
    `${r.scenario}: any ${r.k} of ${r.replicas} replicas, seed ${r.seed}, ${r.duration_s} s measured after ${r.warmup_s} s warm-up${r.interrupted ? " (INTERRUPTED)" : ""}`,
  );
  lines.push(`replica p99 (model): ${r.replica_p99_model_ms.map((v) => `${v} ms`).join(", ")}`);
  lines.push(
    `hedge: delayMs ${r.hedge.delayMs}, maxExtraLoad ${r.hedge.maxExtraLoad} (gated, percentile), checkEveryMs ${r.hedge.checkEveryMs}`,
  );
  lines.push(
    "latency: caller's, from send to reply; a miss counts at its budget (≥: the quantile is a miss)",
  );
  lines.push(
    "all: over every request; answered: over the requests every policy got a reply to in time (errors: late replies)",
  );
  for (const b of r.budgets) {
    lines.push("");
    lines.push(`budget ${b.budget_ms} ms${b.below_replica_p99 ? " (below the replicas' p99)" : ""}`);
    lines.push(
      "  policy        reqs  p50 ms  p99 all  p99.9 all  p99 answered  misses errors  extra load  backups  won  unlandable  cut work ms/req",
    );
    for (const [p, c] of Object.entries(b.policies)) {
      const a = c.answered_by_all;
      lines.push(
        `  ${p.padEnd(12)} ${String(c.requests).padStart(5)} ${f(c.p50_ms).padStart(7)} ${f(c.p99_ms, c.p99_is_lower_bound).padStart(8)} ${f(c.p999_ms, c.p999_is_lower_bound).padStart(10)} ${`${f(a.p99_ms, a.p99_is_lower_bound)} (${a.requests})`.padStart(13)} ${String(c.deadline_misses).padStart(7)} ${String(c.errors).padStart(6)} ${`${c.extra_load_pct.toFixed(1)}%`.padStart(11)} ${String(c.backups).padStart(8)} ${String(c.backups_won).padStart(4)} ${String(c.backups_unlandable).padStart(11)} ${c.cut_work_ms_per_request.toFixed(1).padStart(16)}`,
      );
    }
    const g = b.policies.gated;
    if (g !== undefined && Object.keys(g.refused).length > 0)
      lines.push(
        `  gated refused: ${Object.entries(g.refused)
          .map(([reason, n]) => `${reason} ${n}`)
          .join(", ")}; spare replica p99 in its refusals: median ${f(g.refused_backup_p99_median_ms)} ms`,
      );
    for (const v of b.gated_versus) {
      lines.push(
        `  gated − ${v.baseline}: latency ms ${interval(v.latency_ms)}, miss ${interval(v.miss, 3)}, backups ${interval(v.backups, 3)}, cut work ms ${interval(v.cut_work_ms)}`,
      );
    }
    lines.push(
      `  goal (p99 answered) ${b.goal.met === null ? "not checked" : b.goal.met ? "MET" : "NOT MET"}: ${b.goal.because}`,
    );
  }
  const errs = Object.entries(r.errors);
  if (errs.length > 0)
    lines.push("", `errors (counted as misses): ${errs.map(([c, n]) => `${c} ${n}`).join(", ")}`);
  if (r.processes.left_running.length > 0)
    lines.push(`processes still running after stop: ${r.processes.left_running.join(", ")}`);
  return `${lines.join("\n")}\n`;
}
