/** Human-readable text of flight-recorder decisions (what `tailswarm decisions` prints). */
import type { DecisionRecord } from "./flight-recorder.js";

const ms = (v: number | null): string => (v === null ? "?" : v < 10 ? v.toFixed(1) : v.toFixed(0));

/** A lower bound says so next to its number. */
const kind = (k: DecisionRecord["p50Kind"]): string => (k === "lower-bound" ? " (lower bound)" : "");

/** One block per decision, newest first: the verdict and its numbers, then what happened. */
export function formatDecisions(decisions: readonly DecisionRecord[]): string {
  if (decisions.length === 0) return "no decisions recorded yet\n";
  const lines: string[] = [];
  for (const d of decisions) {
    const at = new Date(d.atUnixMs).toISOString().replace("T", " ").replace("Z", "");
    lines.push(`${at}  ${d.fanoutId}  ${d.mode.toUpperCase()}  (${d.reason})`);
    if (d.because !== "") lines.push(`  because ${d.because}`);
    if (d.hedges !== undefined) {
      for (const h of d.hedges) lines.push(`  hedge ${h}`);
      lines.push(
        `  budget ${ms(d.budgetMs)} ms; lost work ${ms(d.lostWorkMs)} ms; ${ms(d.elapsedMs)} ms${d.deadlineMissed ? " — DEADLINE MISSED" : ""}`,
      );
      continue;
    }
    const est =
      d.estimateStatus === "fresh"
        ? `fresh, min ${d.minSamples} samples, oldest ${ms(d.estimateAgeMs)} ms, ${d.estimateBasis === "observed" ? "p50/p99 observed per fan-out" : "p50/p99 from per-peer CDFs (independence)"}`
        : `unknown${d.unknownPeers.length > 0 ? ` (${d.unknownPeers.join(", ")})` : ""}`;
    lines.push(
      `  budget ${ms(d.budgetMs)} ms  p50 ${ms(d.fanoutP50Ms)} ms${kind(d.p50Kind)}  p99 ${ms(d.fanoutP99Ms)} ms${kind(d.p99Kind)}  ` +
        `abandon cost ${ms(d.abandonCostMs)} ms${d.policy === "" ? "" : ` (${d.policy}'s ledger)`}  ${d.decisionRelevant ? "decision-relevant" : "not decision-relevant"}`,
    );
    const horizon =
      d.horizonMs === null ? "" : `; horizon ${ms(d.horizonMs)} ms (beyond it only lower bounds)`;
    lines.push(`  set ${d.size} peers, ${d.requirement}; estimate ${est}${horizon}`);
    const b = d.branches;
    const parts = (Object.keys(b) as (keyof typeof b)[]).filter((k) => b[k] > 0).map((k) => `${b[k]} ${k}`);
    lines.push(
      `  branches: ${parts.length > 0 ? parts.join(", ") : "none"}; lost work ${ms(d.lostWorkMs)} ms; ` +
        `${d.degraded ? "degraded (fallback decided)" : d.decisionChanged ? "answers changed the decision" : "decision unchanged"}; ` +
        `${ms(d.elapsedMs)} ms${d.deadlineMissed ? " — DEADLINE MISSED" : ""}`,
    );
    if (d.violation !== null) lines.push(`  violation ${d.violation.code}: ${d.violation.message}`);
    if (d.traceId !== null) lines.push(`  trace ${d.traceId}`);
  }
  return `${lines.join("\n")}\n`;
}
