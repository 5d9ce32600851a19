/**
 * How a branch ended from the coordinator's point of view (`BranchRecord`), given how the transport
 * saw it and what the fan-out did with it.
 */
import type { Mode } from "../policy/types.js";
import type { Branch } from "./branch-set.js";
import type { BranchOutcome, BranchRecord } from "./outcome.js";
import type { BranchResult } from "./transport.js";

export interface RecordContext {
  readonly mode: Mode;
  /** Synchronous mode: the required answers all arrived (answers are `committed`, else `partial`). */
  readonly requirementMet: boolean;
  /** Leave-one-out: peers whose answer changed the action. */
  readonly decisionRelevant: ReadonlySet<string>;
  /** Time the fan-out decided (latency of a branch still out is measured to it). */
  readonly now: number;
}

/** The record of `branch`; a branch still unsettled is recorded as `unsettled` with no lost work yet. */
export function branchRecord<Answer>(branch: Branch<Answer>, ctx: RecordContext): BranchRecord {
  const result = branch.result ?? placeholder(branch);
  const outcome = outcomeOf(branch, result, ctx);
  // A measurement branch was not stopped by anyone: its peer work is measurement, not work lost.
  const lostWorkMs =
    !branch.measurement && (outcome === "abandoned" || outcome === "late") ? lostWork(result) : 0;
  const record: BranchRecord = {
    peer: branch.peer,
    branchId: branch.branchId,
    outcome,
    deadline: branch.deadline,
    latencyMs: (branch.endedAt ?? ctx.now) - branch.issuedAt,
    lostWorkMs,
    decisionRelevant: branch.inTime && ctx.decisionRelevant.has(branch.peer),
    result,
    ...(branch.probe
      ? { probe: true, probeWorkMs: lostWork(result) }
      : branch.measurement
        ? { measurement: true, measurementWorkMs: lostWork(result) }
        : {}),
  };
  return branch.result === undefined ? { ...record, unsettled: true } : record;
}

function outcomeOf<Answer>(branch: Branch<Answer>, result: BranchResult, ctx: RecordContext): BranchOutcome {
  if (branch.inTime) {
    return ctx.mode === "speculate" || ctx.requirementMet ? "committed" : "partial";
  }
  // The decision gave it up (as it would have abandoned it); it ran on for its latency only.
  if (branch.measurement) return result.kind === "failed" ? "failed" : "abandoned";
  switch (result.kind) {
    case "failed":
      return "failed";
    case "abandoned":
      return "abandoned";
    case "deadline":
      return branch.abandonedByUs ? "abandoned" : "late";
    case "answer":
      // Arrived after the decision: thrown away. Ours to charge when we had abandoned it.
      return branch.abandonedByUs ? "abandoned" : "late";
  }
}

function lostWork(result: BranchResult): number {
  switch (result.kind) {
    case "abandoned":
    case "deadline":
      return Math.max(0, result.lostWorkMs);
    case "answer":
      return Math.max(0, result.serviceMs);
    case "failed":
      return 0;
  }
}

function placeholder<Answer>(branch: Branch<Answer>): BranchResult {
  return branch.abandonedByUs || branch.measurement
    ? { kind: "abandoned", lostWorkMs: 0 }
    : { kind: "deadline", lostWorkMs: 0 };
}
