/**
 * Memory-oblivious baselines of the paper's evaluation, behind the Scorer interface: random, shortest
 * path (SP), join-the-shortest-queue (JSQ), queue-only backpressure (BP) and cost-aware BP (Cost-BP).
 */
import type { Primitives } from "../primitives.js";
import type { Scorer } from "../scorer.js";
import { NO_MEMORY } from "../signature.js";

/** Every feasible peer equally likely (ties are broken at random by the router). */
export const randomScorer: Scorer = { score: () => 0 };

/** SP: the cheapest transfer (`ctx.costOf`), i.e. stay local when the source is a candidate. */
export const shortestPathScorer: Scorer = { score: (_t, c) => -c.transferPenalty };

/** JSQ: the smallest total backlog (advertised plus reserved). */
export const jsqScorer: Scorer = { score: (_t, c) => -c.backlog };

/** BP: the queue differential `Q_src^c − Q_j^c` of the task's own queue key; memory plays no part. */
export const bpScorer: Scorer = {
  score: (task, c) => (task.pressure ?? 0) - c.queue(task.commodity.queueKey),
};

/**
 * Cost-BP: the differential minus `ν (d_ij + p̄_j)`, where `p̄_j` is a memory-oblivious reference
 * penalty (the no-reuse penalty when primitives are given, else 0).
 */
export function costBpScorer(nu: number, primitives?: Primitives): Scorer {
  return {
    score(task, c) {
      const key = task.commodity.queueKey;
      const ref = primitives === undefined ? 0 : primitives.get(c.view.id, key, NO_MEMORY).penalty;
      return (task.pressure ?? 0) - c.queue(key) - nu * (c.transferPenalty + ref);
    },
  };
}
