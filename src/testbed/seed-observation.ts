/**
 * The founding note's observation in its own terms, per policy and coordinator: of the speculative
 * fan-outs, the share that committed; of the committed ones, the share that was decision-relevant (the
 * action differs from the local decision without fanning out); of the abandoned ones, the share whose
 * cut-off answers together with the used ones would have flipped the action. Each with a 95% Wilson
 * interval over its fan-outs (docs/value-model.md).
 */
import type { ScoredCall } from "./score-call.js";
import { round } from "./value-model.js";

export interface IntervalRate {
  /** null when nothing was counted (n = 0). */
  readonly value: number | null;
  readonly lo95: number | null;
  readonly hi95: number | null;
  /** The fan-outs the rate is over. */
  readonly n: number;
}

export interface SeedObservation {
  readonly speculative_fanout_commit_rate: IntervalRate;
  readonly decision_relevant_share_of_committed: IntervalRate;
  readonly would_flip_share_of_abandoned: IntervalRate;
}

export function seedObservation(calls: readonly ScoredCall[]): SeedObservation {
  const spec = calls.filter((c) => c.mode === "speculate");
  const committed = spec.filter((c) => !c.speculationAbandoned);
  const abandoned = spec.filter((c) => c.speculationAbandoned);
  return {
    speculative_fanout_commit_rate: wilson(committed.length, spec.length),
    decision_relevant_share_of_committed: wilson(
      committed.filter((c) => c.decisionRelevant).length,
      committed.length,
    ),
    would_flip_share_of_abandoned: wilson(abandoned.filter((c) => c.wouldFlip).length, abandoned.length),
  };
}

/** k of n with its 95% Wilson score interval (sound at 0 and n, and for small n). */
export function wilson(k: number, n: number): IntervalRate {
  if (n === 0) return { value: null, lo95: null, hi95: null, n };
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const mid = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return {
    value: round(p, 4),
    lo95: round(Math.max(0, mid - half), 4),
    hi95: round(Math.min(1, mid + half), 4),
    n,
  };
}
