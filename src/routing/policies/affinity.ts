/**
 * Prefix/context affinity: send the task where its memory object is resident; among equals (all
 * holders, or nobody holds it), the smallest backlog. The admission limit is the only brake, so it
 * herds on hot objects — the baseline MABP's pressure term improves on.
 */
import type { Scorer } from "../scorer.js";

const HOLDER_BONUS = 1e12;

export const affinityScorer: Scorer = {
  score(task, c) {
    const holds = task.signature !== undefined && c.view.signatures.has(task.signature);
    return (holds ? HOLDER_BONUS : 0) - c.backlog;
  },
};
