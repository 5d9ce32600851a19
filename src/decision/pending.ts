import type { PeerId } from "../estimate/types.js";

/**
 * The outstanding peers that can still answer: each once, and none that already answered.
 * Every model's `canFlip` reasons over this set.
 */
export function pendingPeers(
  answers: ReadonlyMap<PeerId, unknown>,
  outstanding: readonly PeerId[],
): PeerId[] {
  const seen = new Set<PeerId>();
  const out: PeerId[] = [];
  for (const peer of outstanding) {
    if (answers.has(peer) || seen.has(peer)) continue;
    seen.add(peer);
    out.push(peer);
  }
  return out;
}
