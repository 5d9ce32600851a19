/**
 * Scores one Coordinate call after the fact, for the value model and the policy table
 * (docs/value-model.md says how each quantity is counted). Everything here is measured on the call
 * except the continuation (`continuationMs`, a value-model parameter) and the would-be answers of
 * branches that never answered, which follow from the workload (informed peers answer the truth,
 * the others the prior). Two kinds of relevance: per fan-out, decision-relevant (the action differs
 * from the local decision without fanning out) and would-flip (the cut-off answers together with the
 * used ones change the action); per branch, pivotal (leave-one-out: that one answer alone decides).
 */
import { quorumVote } from "../decision/quorum-vote.js";
import type { VoteAnswer } from "../decision/quorum-vote.js";
import type { DecisionModel } from "../decision/types.js";
import type { BranchRow, CallRecord } from "./records.js";
import type { PeerPlan } from "./topology.js";

export type ScoredMode = "speculate" | "synchronous" | "degrade" | "error";

export interface ScoredCall {
  readonly policy: string;
  readonly coordinator: string;
  /** Index of the request in its coordinator's stream: the same request under every policy. */
  readonly request: number;
  readonly t: number;
  readonly mode: ScoredMode;
  readonly correct: boolean;
  readonly miss: boolean;
  readonly event: boolean;
  /** Branches issued in speculate mode, and those committed / committed and pivotal (leave-one-out). */
  readonly speculativeBranches: number;
  readonly committed: number;
  readonly pivotalCommits: number;
  /** Bits carried by the committed speculative answers (infoGainPerCommitted × committed). */
  readonly committedBits: number;
  readonly abandoned: number;
  readonly late: number;
  /** Abandoned or late branches whose answer alone, added to the used ones, would have changed the action. */
  readonly pivotalCut: number;
  /**
   * Fan-out level: the fan-out used answers and its action differs from the local decision without
   * fanning out (`model.decide` of no answers).
   */
  readonly decisionRelevant: boolean;
  /** The cut-off (abandoned or late) answers together with the used ones would have changed the action. */
  readonly wouldFlip: boolean;
  /**
   * Speculate mode: the deadline, not the decision, cut branches — one ran into its own deadline (late),
   * or the fan-out reached its decided budget with branches still out (the speculation was abandoned).
   */
  readonly speculationAbandoned: boolean;
  /** Continuation work overlapped with the fan-out and used (speculation committed), ms. */
  readonly overlapMs: number;
  /** Continuation work thrown away (speculation abandoned), ms. */
  readonly thrownMs: number;
  /** Peers' work lost on abandoned branches, and on late (synchronous, past the deadline) ones, ms. */
  readonly abandonLostMs: number;
  readonly lateLostMs: number;
  /** Request sent to the end of the coordinator's continuation, ms. */
  readonly completionMs: number;
  /**
   * Peer work, ms, one accounting for every mode (see `peerWork`): used (the answer was in the
   * deciding set), cut off (cut while its answer could still have changed the action), redundant (the
   * decision was settled before the branch ended: an answer that arrived after it, or a branch cancelled
   * because of it).
   */
  readonly peerWorkUsedMs: number;
  readonly peerWorkCutMs: number;
  readonly peerWorkRedundantMs: number;
  /** The abandon cost the coordinator's rule decided with (the policy's own ledger), ms; NaN when not given. */
  readonly decidedAbandonCostMs: number;
}

export interface ScoreContext {
  readonly peers: ReadonlyMap<string, PeerPlan>;
  readonly prior: string;
  readonly continuationMs: number;
  readonly model: DecisionModel<VoteAnswer, string>;
  /** The local decision without fanning out: `model.decide` of no answers. */
  readonly localAction: string;
}

export function scoreContext(
  peers: readonly PeerPlan[],
  decision: { options: readonly string[]; prior: string; weights: Record<string, number> },
  continuationMs: number,
): ScoreContext {
  const model = quorumVote({ options: decision.options, prior: decision.prior, weights: decision.weights });
  return {
    peers: new Map(peers.map((p) => [p.id, p])),
    prior: decision.prior,
    continuationMs,
    model,
    localAction: model.decide(new Map()),
  };
}

const ANSWERED = new Set(["committed", "partial"]);

export function scoreCall(r: CallRecord, ctx: ScoreContext): ScoredCall {
  const C = ctx.continuationMs;
  const base = {
    policy: r.policy,
    coordinator: r.coordinator,
    request: r.request,
    t: r.t,
    event: r.event,
  };
  if (!r.ok) {
    // No decision within the budget: the caller falls back to its prior at the deadline.
    return {
      ...base,
      mode: "error",
      correct: ctx.prior === r.truth,
      miss: true,
      speculativeBranches: 0,
      committed: 0,
      pivotalCommits: 0,
      committedBits: 0,
      abandoned: 0,
      late: 0,
      pivotalCut: 0,
      decisionRelevant: false,
      wouldFlip: false,
      speculationAbandoned: false,
      overlapMs: 0,
      thrownMs: 0,
      abandonLostMs: 0,
      lateLostMs: 0,
      completionMs: r.budgetMs + C,
      peerWorkUsedMs: 0,
      peerWorkCutMs: 0,
      peerWorkRedundantMs: 0,
      decidedAbandonCostMs: NaN,
    };
  }
  const mode: ScoredMode =
    r.mode === "speculate" || r.mode === "synchronous" || r.mode === "degrade" ? r.mode : "degrade";
  const speculative = mode === "speculate";
  const answers = new Map<string, VoteAnswer>();
  for (const b of r.branches)
    if (ANSWERED.has(b.outcome)) answers.set(b.peer, { vote: wouldAnswer(b.peer, r, ctx) });
  const action = ctx.model.decide(answers);
  let committed = 0;
  let pivotal = 0;
  let abandoned = 0;
  let late = 0;
  let pivotalCut = 0;
  const withCut = new Map(answers);
  let abandonLostMs = 0;
  let lateLostMs = 0;
  for (const b of r.branches) {
    const lost = b.unsettled ? b.latencyMs : b.lostWorkMs;
    if (b.outcome === "committed" && speculative) {
      committed++;
      if (b.pivotal) pivotal++;
    } else if (b.outcome === "abandoned") {
      abandoned++;
      abandonLostMs += lost;
    } else if (b.outcome === "late") {
      late++;
      lateLostMs += lost;
    }
    if (b.outcome === "abandoned" || b.outcome === "late") {
      const would = { vote: wouldAnswer(b.peer, r, ctx) };
      const withIt = new Map(answers);
      withIt.set(b.peer, would);
      if (ctx.model.decide(withIt) !== action) pivotalCut++;
      withCut.set(b.peer, would);
    }
  }
  const elapsed = r.elapsedMs ?? r.rttMs;
  // the budget the coordinator decided with (its adaptive reply reserve taken), as it reported it
  const fanoutBudget = r.decidedBudgetMs ?? r.budgetMs;
  // the deadline, not the decision, ended it: a branch ran into its own deadline (late), or the fan-out
  // ran to its budget with branches still out
  const speculationAbandoned = speculative && (late > 0 || (abandoned > 0 && elapsed >= fanoutBudget - 1.5));
  const work = peerWork(r, ctx, speculationAbandoned);
  const overlapMs = speculative && !speculationAbandoned ? Math.min(C, elapsed) : 0;
  const thrownMs = speculationAbandoned ? Math.min(C, elapsed) : 0;
  return {
    ...base,
    mode,
    correct: r.action === r.truth,
    miss: r.deadlineMissed,
    speculativeBranches: speculative ? r.branches.length : 0,
    committed,
    pivotalCommits: pivotal,
    committedBits: speculative && r.infoGainPerCommitted !== null ? r.infoGainPerCommitted * answers.size : 0,
    abandoned,
    late,
    pivotalCut,
    decisionRelevant: mode !== "degrade" && answers.size > 0 && r.action !== ctx.localAction,
    wouldFlip: withCut.size > answers.size && ctx.model.decide(withCut) !== action,
    speculationAbandoned,
    overlapMs,
    thrownMs,
    abandonLostMs,
    lateLostMs,
    completionMs: r.rttMs + C - overlapMs,
    peerWorkUsedMs: work.peerWorkUsedMs,
    peerWorkCutMs: work.peerWorkCutMs,
    peerWorkRedundantMs: work.peerWorkRedundantMs,
    decidedAbandonCostMs: r.decidedAbandonCostMs ?? NaN,
  };
}

/**
 * Every peer-millisecond of the call's branches, charged the same whatever the mode: **used** (the answer
 * was in the deciding set), **cut off** (cut while its answer could still have changed the action), or
 * **redundant** (the decision was settled before the branch ended). A speculation says which is which
 * itself: it stops the moment its answers settle the vote (`model.canFlip`), so its committed answers
 * are used, the branches it abandoned then are redundant, and the branches its deadline cut are cut off.
 * A synchronous fan-out never stops early, so its branch ends are replayed in time order (an answer at
 * its latency, a late branch at its age when cut) against the same test: an answer before the vote was
 * settled is used, one after it redundant; a late branch is cut off while the vote was open, else
 * redundant. A failed branch reports no work and counts none (it still stops being outstanding).
 */
function peerWork(
  r: CallRecord,
  ctx: ScoreContext,
  speculationAbandoned: boolean,
): Pick<ScoredCall, "peerWorkUsedMs" | "peerWorkCutMs" | "peerWorkRedundantMs"> {
  const workOf = (b: BranchRow): number =>
    Math.max(
      0,
      b.outcome === "failed" ? 0 : ANSWERED.has(b.outcome) || b.unsettled ? b.latencyMs : b.lostWorkMs,
    );
  let used = 0;
  let cut = 0;
  let redundant = 0;
  if (r.mode === "speculate") {
    for (const b of r.branches) {
      if (ANSWERED.has(b.outcome)) used += workOf(b);
      else if (speculationAbandoned) cut += workOf(b);
      else redundant += workOf(b);
    }
    return { peerWorkUsedMs: used, peerWorkCutMs: cut, peerWorkRedundantMs: redundant };
  }
  // at the same moment, answers first
  const ends = [...r.branches].sort(
    (a, b) => a.latencyMs - b.latencyMs || Number(ANSWERED.has(b.outcome)) - Number(ANSWERED.has(a.outcome)),
  );
  const outstanding = new Set(r.branches.map((b) => b.peer));
  const answers = new Map<string, VoteAnswer>();
  let settled = !ctx.model.canFlip(answers, [...outstanding]);
  for (const b of ends) {
    const answered = ANSWERED.has(b.outcome);
    if (settled) redundant += workOf(b);
    else if (answered) used += workOf(b);
    else cut += workOf(b);
    outstanding.delete(b.peer);
    if (answered) answers.set(b.peer, { vote: wouldAnswer(b.peer, r, ctx) });
    if (!settled) settled = !ctx.model.canFlip(answers, [...outstanding]);
  }
  return { peerWorkUsedMs: used, peerWorkCutMs: cut, peerWorkRedundantMs: redundant };
}

function wouldAnswer(peer: string, r: CallRecord, ctx: ScoreContext): string {
  return ctx.peers.get(peer)?.informed === true ? r.truth : ctx.prior;
}
