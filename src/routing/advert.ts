/**
 * What a peer advertises for routing — queue depths per queue key, resident memory signatures (bounded),
 * memory use and budget, capacity — through `State` and piggybacked on every Branch reply, and its
 * conversion to the `PeerView` a router scores. Pure: the wire mapping lives in src/mesh.
 */
import type { PeerId } from "../estimate/types.js";
import { MAX_ADVERTISED_SIGNATURES, SignatureSet } from "./signature.js";
import type { PeerView } from "./types.js";

export interface RoutingAdvert {
  /** Units waiting or in service per queue key (`class/stage`). */
  readonly queues: Readonly<Record<string, number>>;
  /** Resident memory signatures, most valuable first; at most `MAX_ADVERTISED_SIGNATURES` are read. */
  readonly signatures: readonly number[];
  readonly memoryUsed: number;
  readonly memoryBudget: number;
  /** Work units served at once (μ). */
  readonly capacity: number;
  /** Admission limit on the backlog (0 or missing: none). */
  readonly maxBacklog?: number;
  /** When the state was taken, epoch ms on the peer's clock. */
  readonly stateAt: number;
  /** Cumulative since the peer started: memory-stage units served, hits among them, insertions + evictions. */
  readonly served?: number;
  readonly hits?: number;
  readonly churn?: number;
}

/**
 * The router's view of `peer` from its advert. Negative or non-finite numbers read as 0 (a peer cannot
 * make itself more attractive than empty).
 *
 * @example
 * const view = viewFromAdvert("peer-a", reply.load.routing);
 * router.route(task, [view], 1, { now });
 */
export function viewFromAdvert(peer: PeerId, advert: RoutingAdvert): PeerView {
  const queues: Record<string, number> = {};
  let backlog = 0;
  for (const [key, depth] of Object.entries(advert.queues)) {
    const d = nonNegative(depth);
    if (d === 0) continue;
    queues[key] = d;
    backlog += d;
  }
  const max = nonNegative(advert.maxBacklog ?? 0);
  return {
    id: peer,
    queues,
    backlog,
    signatures: SignatureSet.bounded(advert.signatures, MAX_ADVERTISED_SIGNATURES),
    memoryUsed: nonNegative(advert.memoryUsed),
    memoryBudget: nonNegative(advert.memoryBudget),
    capacity: nonNegative(advert.capacity),
    ...(max > 0 ? { maxBacklog: max } : {}),
    stateAt: Number.isFinite(advert.stateAt) ? advert.stateAt : 0,
  };
}

function nonNegative(v: number): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}
