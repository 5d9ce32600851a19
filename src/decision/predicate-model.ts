import { invalid } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { pendingPeers } from "./pending.js";
import { sameAction } from "./same-action.js";
import type { DecisionModel } from "./types.js";

export interface PredicateModelOptions<Answer, Action> {
  /** Shown in traces and reports. Default `"predicate"`. */
  readonly name?: string;
  /** The local decision, taken when there are no answers. */
  readonly prior: Action;
  /** The action with these answers (called only with at least one answer). */
  decide(answers: ReadonlyMap<PeerId, Answer>): Action;
  /** True when some answers of the outstanding peers would change `decide`. Must not over-promise: when unsure, say true. */
  canFlip(answers: ReadonlyMap<PeerId, Answer>, outstanding: readonly PeerId[]): boolean;
  /** Validate a wire answer; throw TailswarmError("INVALID_ARGUMENT") naming the field. Default: accept as is. */
  parseAnswer?(raw: unknown): Answer;
  /**
   * Bits the answers carry about the action (>= 0). Default, a coarse measure: 1 bit when the answers
   * moved the action away from the prior, 0 when they confirmed it.
   */
  informationBits?(answers: ReadonlyMap<PeerId, Answer>): number;
}

/**
 * A decision model from caller-supplied functions, for decisions the built-in models do not cover.
 * The wrapper makes the prior decide with no answers, drops outstanding peers that already
 * answered before calling `canFlip`, and checks that `informationBits` returns a number >= 0.
 *
 * @example
 * // Act on the first answer that says "stop"; otherwise keep going.
 * const model = predicateModel<{ stop: boolean }, "stop" | "go">({
 *   prior: "go",
 *   decide: (answers) => ([...answers.values()].some((a) => a.stop) ? "stop" : "go"),
 *   canFlip: (answers, outstanding) => outstanding.length > 0 && ![...answers.values()].some((a) => a.stop),
 *   parseAnswer: (raw) => {
 *     if (typeof (raw as { stop?: unknown })?.stop !== "boolean") {
 *       throw invalid("answer.stop", (raw as { stop?: unknown }).stop, "a boolean");
 *     }
 *     return raw as { stop: boolean };
 *   },
 * });
 */
export function predicateModel<Answer = unknown, Action = string>(
  opts: PredicateModelOptions<Answer, Action>,
): DecisionModel<Answer, Action> {
  if (typeof opts.decide !== "function" || typeof opts.canFlip !== "function") {
    throw invalid("predicateModel options", Object.keys(opts), "decide and canFlip functions");
  }
  const decide = (answers: ReadonlyMap<PeerId, Answer>): Action =>
    answers.size === 0 ? opts.prior : opts.decide(answers);
  return {
    name: opts.name ?? "predicate",
    parseAnswer(raw) {
      return opts.parseAnswer ? opts.parseAnswer(raw) : (raw as Answer);
    },
    decide,
    canFlip(answers, outstanding) {
      const pending = pendingPeers(answers, outstanding);
      return pending.length > 0 && opts.canFlip(answers, pending);
    },
    informationBits(answers) {
      if (opts.informationBits === undefined) return sameAction(decide(answers), opts.prior) ? 0 : 1;
      const bits = opts.informationBits(answers);
      if (typeof bits !== "number" || Number.isNaN(bits) || bits < 0) {
        throw invalid(`${opts.name ?? "predicate"}.informationBits`, bits, "a number >= 0");
      }
      return bits;
    },
  };
}
