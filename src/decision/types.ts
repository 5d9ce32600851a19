/** Contract of src/decision — can the outstanding answers still change the action? */
import type { PeerId } from "../estimate/types.js";

/**
 * A decision model turns the answers received so far into an action, and says whether answers still
 * outstanding could change it. `Answer` is what a peer returns (already validated by `parseAnswer`).
 */
export interface DecisionModel<Answer = unknown, Action = string> {
  readonly name: string;
  /** Validate an answer from the wire; throw TailswarmError("INVALID_ARGUMENT") naming what was wrong. */
  parseAnswer(raw: unknown): Answer;
  /** The action with these answers (the local prior decides when there are none). */
  decide(answers: ReadonlyMap<PeerId, Answer>): Action;
  /** True when some assignment of the outstanding peers' answers would change `decide`. */
  canFlip(answers: ReadonlyMap<PeerId, Answer>, outstanding: readonly PeerId[]): boolean;
  /**
   * Bits of information the answers carry about the action, relative to the prior (>= 0).
   * Used for information gain per committed branch.
   */
  informationBits(answers: ReadonlyMap<PeerId, Answer>): number;
  /**
   * Optional: the peers whose answer, removed alone, changes `decide`, in the answers' order — what
   * `scoreRelevance` otherwise finds by deciding once per answer (n² work per fan-out of n), for a
   * model that can count it in one pass. It must return exactly what leave-one-out returns, or
   * undefined to leave these answers to leave-one-out. A model built from another that overrides
   * `decide` must drop it.
   */
  decisionRelevant?(answers: ReadonlyMap<PeerId, Answer>): PeerId[] | undefined;
}

/** Leave-one-out scoring of the committed answers of one fan-out. */
export interface RelevanceScore {
  readonly action: unknown;
  /** Peers whose answer, when removed, changes the action. */
  readonly decisionRelevant: readonly PeerId[];
  readonly committed: number;
  /** informationBits(all) / committed, or null when nothing was committed. */
  readonly infoGainPerCommitted: number | null;
}
