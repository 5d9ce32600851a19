/**
 * The memory-augmented pressure of the MABP paper (docs/background.md):
 *
 *   W_i^a(t; Y_i) = Q_i^{ι(a)} − Σ_{c'} P_i(c' | a, Y_i) Q_i^{c'} − ν p_i(a, Y_i)
 *
 * and the routing differential `W_ij^c = Q_i^c − Q_j^c − ν d_ij^c`. Pure arithmetic, no allocation.
 */
import type { PrimitiveEntry } from "./primitives.js";

/** Queue depth of `key` as the scorer sees it (advertised plus reserved). */
export type QueueReader = (key: string) => number;

/** Expected successor pressure `Σ_{c'} P(c' | a, Y) Q^{c'}` at one node. */
export function successorPressure(entry: PrimitiveEntry, queue: QueueReader): number {
  let sum = 0;
  const s = entry.successors;
  for (let i = 0; i < s.length; i++) sum += s[i]!.p * queue(s[i]!.key);
  return sum;
}

/**
 * Service weight `W^a = Q^{ι(a)} − Σ P(c'|a,Y) Q^{c'} − ν p(a,Y)`.
 *
 * @example
 * // the verifier queue holds 10; a memory hit creates a verifier job with p 0.1 and costs penalty 1
 * serviceWeight(6, { work: 1, penalty: 1, successors: [{ key: "v", p: 0.1 }] }, () => 10, 5); // 6 − 1 − 5 = 0
 */
export function serviceWeight(qIn: number, entry: PrimitiveEntry, queue: QueueReader, nu: number): number {
  return qIn - successorPressure(entry, queue) - nu * entry.penalty;
}

/**
 * Pressure per unit of work, ordered so that less work always ranks higher at equal pressure: a positive
 * weight is a value density `W / w` (the knapsack ratio of the paper's one-slot surrogate); a negative
 * weight — the unit must still be placed somewhere — is a cost that grows with the work it occupies,
 * `W · w`.
 */
export function perWork(weight: number, work: number): number {
  return weight > 0 ? weight / work : weight * work;
}

/** The parts of one MABP score, for explanation (traces, `tailswarm explain`). */
export interface PressureBreakdown {
  readonly compat: number;
  readonly queueIn: number;
  readonly queueDest: number;
  readonly successorPressure: number;
  readonly penalty: number;
  readonly transferPenalty: number;
  readonly work: number;
  /** `Q_src − Q_dest − Σ P Q' − ν (p + d)`. */
  readonly weight: number;
  /** `perWork(weight, work)`: what the router ranks on. */
  readonly score: number;
}

/**
 * The routing form of MABP for placing one unit of commodity `c` on destination `j`: the routing
 * differential plus the service weight at `j`, whose `Q_j^c` terms telescope — the queue differential
 * `Q_src − Q_j^c`, minus the successor pressure at `j`, minus `ν (p_j(a, Y_j) + d_ij)` — per unit of
 * work `w_j(a, Y_j)`.
 */
export function placementScore(
  qSource: number,
  qDest: number,
  entry: PrimitiveEntry,
  queue: QueueReader,
  nu: number,
  transferPenalty: number,
): number {
  const w = qSource - qDest - successorPressure(entry, queue) - nu * (entry.penalty + transferPenalty);
  return perWork(w, entry.work);
}
