/** Nearest-rank quantile of ascending `sorted`: the value at rank ⌈q·n⌉ (1-based); undefined when empty. */
export function nearestRank(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
