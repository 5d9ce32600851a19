/**
 * The reply of a replicated `Coordinate` ("any k of these r replicas", hedged): built from the
 * HedgedFanout's outcome when it returns. Mode `replicated`, reason the hedge policy; the action is the
 * first k answers by peer. Losers are abandoned when the k-th answer arrives, so their lost work is not
 * reported yet (`unsettled` branches, lost work 0): the node's ledger and telemetry charge it when it is.
 */
import type { HedgedOutcome } from "../engine/hedge-outcome.js";
import { branchCounts, branchSummary } from "./coordinate.js";
import type { CoordinateResult } from "./coordinate.js";

export function fromHedgedOutcome(o: HedgedOutcome): CoordinateResult {
  return {
    action: Object.fromEntries(o.answers),
    mode: "replicated",
    reason: o.policy,
    fanoutId: o.fanoutId,
    fanoutP50Ms: NaN,
    fanoutP99Ms: NaN,
    ...branchCounts(o.branches),
    degraded: false,
    decisionChanged: false,
    elapsedMs: o.elapsedMs,
    budgetMs: o.budgetMs,
    abandonCostMs: o.branches.reduce((s, b) => s + b.lostWorkMs, 0),
    branches: o.branches.map(branchSummary),
    deadlineMissed: o.deadlineMissed,
    backups: o.backups.map((b) => ({
      peer: b.peer,
      backs: b.backs,
      sentAtMs: b.sentAtMs,
      reason: b.reason,
      landable: b.landable,
      won: b.won,
    })),
    refused: o.decisions
      .filter((d) => d.decision.action === "refuse")
      .map((d) => ({
        backs: d.primary,
        backup: d.backup,
        atMs: d.atMs,
        reason: d.decision.reason,
        remainingMs: d.decision.remainingMs,
        ...(Number.isFinite(d.decision.backupP99Ms) && { backupP99Ms: d.decision.backupP99Ms }),
        costMs: d.decision.costMs,
      })),
  };
}
