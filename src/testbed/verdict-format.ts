/** How the verdict and its predictions write numbers. */
import type { StatsView } from "./report-view.js";

export const NOT_SHOWN = "not shown by this run";

/** "(95% interval 16.1 to 21.8)", or "(95% interval -3.3 to 9.2: not shown by this run)". */
export function fmtInterval(lo: number, hi: number, digits: number, notShown: boolean): string {
  return `(95% interval ${lo.toFixed(digits)} to ${hi.toFixed(digits)}${notShown ? `: ${NOT_SHOWN}` : ""})`;
}

export function signed(x: number): string {
  return `${x > 0 ? "+" : ""}${x.toFixed(1)}`;
}

export function rate(x: number | null | undefined): string {
  return x === null || x === undefined ? "n/a" : x.toFixed(3);
}

export function ms(x: number): string {
  return `${x >= 100 ? x.toFixed(0) : x.toFixed(1)} ms`;
}

/**
 * The measured p99's interval: "95% interval 183 ms to 402 ms", or "… to beyond the largest of 62
 * fan-outs" where the samples cannot bound it above.
 */
export function p99IntervalText(iv: { lo: number | null; hi: number | null }, samples: number): string {
  const lo = iv.lo === null ? "below the smallest" : ms(iv.lo);
  const hi = iv.hi === null ? `beyond the largest of ${samples} fan-outs` : ms(iv.hi);
  return `95% interval ${lo} to ${hi}`;
}

export function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

export function joinAnd(xs: readonly string[]): string {
  if (xs.length <= 1) return xs.join("");
  return `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`;
}

/** Pivotal (leave-one-out) committed branches, recovered from the rate and the commits. */
export function pivotalCommits(s: StatsView): number {
  const rel = s.pivotal_commit_rate ?? s.decision_relevant_commit_rate;
  return rel === null || rel === undefined ? 0 : Math.round(rel * s.commits_per_fanout * s.fanouts);
}
