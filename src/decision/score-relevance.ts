import type { PeerId } from "../estimate/types.js";
import { sameAction } from "./same-action.js";
import type { DecisionModel, RelevanceScore } from "./types.js";

/**
 * Leave-one-out scoring of the committed answers of one fan-out: a committed answer is
 * decision-relevant when removing it (and only it) changes `decide` (the model's own
 * `decisionRelevant` when it has one, else one `decide` per answer). Also the information the
 * answers carried per committed branch (`informationBits(all) / committed`).
 *
 * Leave-one-out is conservative about redundancy: with three agreeing votes where two decide, no
 * single one is relevant. That is the point — redundant commits are the low-value ones the founding
 * note warns about — but read the rate as "branches that were decisive", not "branches that agreed".
 *
 * @example
 * const model = quorumVote({ prior: "no" });
 * const score = scoreRelevance(model, new Map([["a", { vote: "yes" }], ["b", { vote: "no" }], ["c", { vote: "yes" }]]));
 * score.action;            // "yes"
 * score.decisionRelevant;  // ["a", "c"]: without either, 1–1 is a tie and the prior "no" wins
 * decisionRelevantRate(score); // 2 / 3
 */
export function scoreRelevance<Answer, Action>(
  model: DecisionModel<Answer, Action>,
  committed: ReadonlyMap<PeerId, Answer>,
): RelevanceScore {
  const action = model.decide(committed);
  const decisionRelevant = model.decisionRelevant?.(committed) ?? leaveOneOut(model, committed, action);
  const n = committed.size;
  return {
    action,
    decisionRelevant,
    committed: n,
    infoGainPerCommitted: n === 0 ? null : model.informationBits(committed) / n,
  };
}

/** The peers whose answer, removed alone, changes the action: one `decide` per answer. */
export function leaveOneOut<Answer, Action>(
  model: DecisionModel<Answer, Action>,
  committed: ReadonlyMap<PeerId, Answer>,
  action: Action = model.decide(committed),
): PeerId[] {
  const relevant: PeerId[] = [];
  for (const peer of committed.keys()) {
    const without = new Map(committed);
    without.delete(peer);
    if (!sameAction(model.decide(without), action)) relevant.push(peer);
  }
  return relevant;
}

/** Share of committed answers that were decision-relevant (null when nothing was committed). */
export function decisionRelevantRate(score: RelevanceScore): number | null {
  return score.committed === 0 ? null : score.decisionRelevant.length / score.committed;
}
