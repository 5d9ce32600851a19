/**
 * One hedge decision as a person reads it: what happened to which backup, the reason, and the numbers
 * its condition was evaluated with (what the flight recorder keeps and `tailswarm decisions` prints).
 * A number the decision did not use is left out; a lower-bound or unknown p99 says so.
 *
 * @example
 * describeHedgeDecision({ primary: "a", backup: "b", atMs: 0, decision })
 * // "at 0 ms, backup b for a refused (cannot-land): remaining 95.2 ms, p99(b) 210.4 ms, cost 3.1 ms"
 */
import type { PeerId } from "../estimate/types.js";
import type { HedgeDecision } from "./types.js";

const ms = (v: number): string => `${Number(v.toFixed(1))} ms`;

export function describeHedgeDecision(r: {
  readonly primary: PeerId;
  readonly backup: PeerId;
  readonly atMs: number;
  readonly decision: HedgeDecision;
}): string {
  const d = r.decision;
  const verb = d.action === "send" ? "sent" : d.action === "refuse" ? "refused" : "waiting";
  const parts = [`remaining ${ms(d.remainingMs)}`];
  if (d.backupP99Kind === "unknown") parts.push(`p99(${r.backup}) unknown`);
  else
    parts.push(
      `p99(${r.backup}) ${d.backupP99Kind === "lower-bound" ? "≥ " : ""}${ms(d.backupP99Ms)}${d.backupP99Kind === "lower-bound" ? " (lower bound)" : ""}`,
    );
  parts.push(`cost ${ms(d.costMs)}`);
  if (Number.isFinite(d.gainMs)) parts.push(`gain ${ms(d.gainMs)}`);
  if (Number.isFinite(d.primaryMissProbability))
    parts.push(`P(${r.primary} misses) ${Number(d.primaryMissProbability.toFixed(3))}`);
  if (Number.isFinite(d.delayMs)) parts.push(`delay ${ms(d.delayMs)}`);
  if (d.landable !== undefined) parts.push(d.landable ? "can land" : "cannot land");
  return `at ${ms(r.atMs)}, backup ${r.backup} for ${r.primary} ${verb} (${d.reason}): ${parts.join(", ")}`;
}
