/**
 * MABP routing: the memory-augmented pressure of the MABP paper (docs/background.md) for placing one unit on a candidate,
 *
 *   score_j = perWork( Q_src^c − Q_j^c − Σ_{c'} P_j(c'|a,Y_j) Q_j^{c'} − ν (p_j(a,Y_j) + d_ij),  w_j(a,Y_j) )
 *
 * with the primitives read at the candidate's compatibility signature (the task's signature when it is
 * resident there, else no-reuse).
 */
import { placementScore, perWork, successorPressure, type PressureBreakdown } from "../pressure.js";
import type { Primitives } from "../primitives.js";
import type { Scorer } from "../scorer.js";
import { compatibilityAt, NO_MEMORY, SignatureSet } from "../signature.js";
import type { PeerView, RouteTask } from "../types.js";

export function mabpScorer(nu: number, primitives: Primitives): Scorer {
  return {
    score(task, c) {
      const key = task.commodity.queueKey;
      const compat = compatibilityAt(task.signature, c.view.signatures);
      const entry = primitives.get(c.view.id, key, compat);
      return placementScore(task.pressure ?? 0, c.queue(key), entry, c.queue, nu, c.transferPenalty);
    },
    // What the router calls: `score` for every candidate, inlined so that nothing is allocated per
    // candidate (no closure, no number returned across a call). Same arithmetic in the same order as
    // `placementScore`, so the results are identical (tested).
    scoreAll(task, batch, _ctx, out) {
      const key = task.commodity.queueKey;
      const keyId = batch.keyId(key);
      const sig = task.signature ?? NO_MEMORY;
      const sig32 = sig | 0;
      const qSource = task.pressure ?? 0;
      // Successor keys repeat across candidates (the same few entries): resolve each once.
      let succKey = "";
      let succId = -1;
      for (let i = 0; i < batch.size; i++) {
        const view = batch.view(i);
        const resident = view.signatures;
        const holds =
          sig !== NO_MEMORY &&
          (resident instanceof SignatureSet ? resident.hasInt32(sig32) : resident.has(sig));
        const compat = holds ? sig : NO_MEMORY;
        const entry = primitives.get(view.id, key, compat);
        const qDest = batch.queue(i, key, keyId);
        const successors = entry.successors;
        let succ = 0;
        for (let m = 0; m < successors.length; m++) {
          const s = successors[m]!;
          if (s.key !== succKey) {
            succKey = s.key;
            succId = batch.keyId(succKey);
          }
          succ += s.p * batch.queue(i, succKey, succId);
        }
        const w = qSource - qDest - succ - nu * (entry.penalty + batch.transferPenalty(i));
        out[i] = w > 0 ? w / entry.work : w * entry.work;
      }
    },
  };
}

/**
 * The components of the MABP score of `task` on `view` (advertised state only, no reservations): what a
 * trace or `tailswarm explain` shows.
 */
export function explainMabp(
  task: RouteTask,
  view: PeerView,
  primitives: Primitives,
  nu: number,
  transferPenalty = 0,
): PressureBreakdown {
  const key = task.commodity.queueKey;
  const queue = (k: string): number => view.queues[k] ?? 0;
  const compat = compatibilityAt(task.signature, view.signatures);
  const entry = primitives.get(view.id, key, compat);
  const queueIn = task.pressure ?? 0;
  const queueDest = queue(key);
  const succ = successorPressure(entry, queue);
  const weight = queueIn - queueDest - succ - nu * (entry.penalty + transferPenalty);
  return {
    compat,
    queueIn,
    queueDest,
    successorPressure: succ,
    penalty: entry.penalty,
    transferPenalty,
    work: entry.work,
    weight,
    score: perWork(weight, entry.work),
  };
}
