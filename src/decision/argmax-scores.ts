import { clip, invalid } from "../errors.js";
import { describeRange, numberRange } from "../util/range.js";
import type { PeerId } from "../estimate/types.js";
import { dirichletInfoBits, priorPseudoCounts } from "./information.js";
import { pendingPeers } from "./pending.js";
import { strictMaxIndex } from "./strict-max.js";
import type { DecisionModel } from "./types.js";

/** A peer's answer: a score for every action, each within the model's bounds. */
export interface ScoresAnswer {
  readonly scores: Readonly<Record<string, number>>;
}

export interface ArgmaxScoresOptions {
  /** The actions to choose from (distinct, non-empty). */
  readonly actions: readonly string[];
  /** The local decision: it wins ties at the top, and decides when there are no answers. */
  readonly prior: string;
  /** Every score lies in [min, max] (finite, min <= max); an answer outside them is rejected. */
  readonly bounds: { readonly min: number; readonly max: number };
}

/**
 * Each answer scores every action; the action is the one with the strictly largest sum of scores,
 * and the prior when the top is tied (so with no answers, the prior).
 *
 * `canFlip` is exact: each outstanding answer can independently put any action anywhere in
 * [min, max], so with m outstanding answers the best attack on the current action A gives a rival B
 * `m·max` and everyone else `m·min`.
 * - A ≠ prior is flipped iff some B can reach a tie: `S(B) + m·max >= S(A) + m·min`.
 * - The prior is flipped iff some B ≠ prior can lead strictly: `S(B) + m·max > S(C) + m·min` for
 *   every C ≠ B.
 *
 * `informationBits`: see `dirichletInfoBits`, each answer adding its scores rescaled into [0, 1] as
 * evidence for each action (with `min == max` the answers carry no information).
 *
 * @example
 * const model = argmaxScores({ actions: ["retry", "skip"], prior: "retry", bounds: { min: 0, max: 1 } });
 * const answers = new Map([["a", { scores: { retry: 0, skip: 1 } }]]);
 * model.decide(answers);         // "skip"
 * model.canFlip(answers, ["b"]); // true: b scoring retry 1, skip 0 ties it, and the prior wins ties
 */
export function argmaxScores(opts: ArgmaxScoresOptions): DecisionModel<ScoresAnswer, string> {
  const actions = validateActions(opts.actions);
  const { min, max } = validateBounds(opts.bounds);
  const prior = opts.prior;
  const priorIndex = actions.indexOf(prior);
  if (priorIndex < 0) {
    throw invalid("prior", prior, `one of the actions (${actions.join(", ")})`);
  }
  const pseudo = priorPseudoCounts(actions, prior);
  const span = max - min;

  const sums = (answers: ReadonlyMap<PeerId, ScoresAnswer>): number[] => {
    const s = actions.map(() => 0);
    for (const answer of answers.values()) {
      actions.forEach((action, i) => {
        s[i] = (s[i] ?? 0) + (answer.scores[action] ?? 0);
      });
    }
    return s;
  };

  /** Index of the strict maximum, or the prior's index when the top is tied. */
  const top = (s: readonly number[]): number => {
    const i = strictMaxIndex(s);
    return i < 0 ? priorIndex : i;
  };

  return {
    name: "argmax-scores",
    parseAnswer(raw: unknown): ScoresAnswer {
      const scores = (raw as { scores?: unknown } | null)?.scores;
      if (typeof raw !== "object" || raw === null || typeof scores !== "object" || scores === null) {
        throw invalid("answer.scores", scores, "an object { <action>: number }");
      }
      const record = scores as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (!actions.includes(key)) {
          throw invalid(
            `answer.scores.${clip(key)}`,
            record[key],
            `no such key: only the actions ${actions.join(", ")}`,
          );
        }
      }
      const out: Record<string, number> = {};
      for (const action of actions) {
        const v = record[action];
        if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
          throw invalid(`answer.scores.${action}`, v, describeRange(numberRange(min, max)));
        }
        out[action] = v;
      }
      return { scores: out };
    },
    decide(answers) {
      return actions[top(sums(answers))] ?? prior;
    },
    canFlip(answers, outstanding) {
      const m = pendingPeers(answers, outstanding).length;
      if (m === 0 || span === 0) return false;
      const s = sums(answers);
      const a = top(s);
      const up = m * max;
      const down = m * min;
      if (a !== priorIndex) {
        return s.some((sb, b) => b !== a && sb + up >= (s[a] ?? 0) + down);
      }
      return s.some((sb, b) => b !== a && s.every((sc, c) => c === b || sb + up > sc + down));
    },
    informationBits(answers) {
      if (span === 0) return 0;
      const evidence = actions.map(() => 0);
      for (const answer of answers.values()) {
        actions.forEach((action, i) => {
          evidence[i] = (evidence[i] ?? 0) + ((answer.scores[action] ?? min) - min) / span;
        });
      }
      return dirichletInfoBits(pseudo, evidence);
    },
  };
}

function validateActions(actions: readonly string[]): string[] {
  if (!Array.isArray(actions) || actions.length === 0) {
    throw invalid("actions", actions, "a non-empty array of strings");
  }
  if (new Set(actions).size !== actions.length || actions.some((a) => typeof a !== "string" || a === "")) {
    throw invalid("actions", actions, "distinct non-empty strings");
  }
  return [...actions];
}

function validateBounds(bounds: { readonly min: number; readonly max: number } | undefined): {
  min: number;
  max: number;
} {
  const min = bounds?.min;
  const max = bounds?.max;
  if (
    typeof min !== "number" ||
    typeof max !== "number" ||
    !Number.isFinite(min) ||
    !Number.isFinite(max) ||
    min > max
  ) {
    throw invalid("bounds", bounds, "{ min, max }, finite numbers with min <= max");
  }
  return { min, max };
}
