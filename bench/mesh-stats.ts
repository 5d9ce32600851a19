/**
 * Small statistics for bench/mesh.bench.ts: quantiles, a shuffle for the order of modes, and
 * percentile-bootstrap confidence intervals, so that an "added latency" figure comes with the
 * interval it is known to within and a reader can tell a real difference from the run's noise.
 */
import { createRng } from "../src/util/rng.js";

/** The q-quantile of an ascending array (nearest rank, lower). NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** A shuffled copy (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export interface Estimate {
  readonly value: number;
  /** 95% percentile-bootstrap interval. */
  readonly low: number;
  readonly high: number;
}

/**
 * `stat` over paired samples `a[i]`, `b[i]` with a 95% percentile-bootstrap interval: pairs are
 * resampled together, so the interval keeps what pairing buys (both samples of a pair met the same
 * load from other processes).
 */
export function pairedBootstrap(
  a: readonly number[],
  b: readonly number[],
  stat: (a: readonly number[], b: readonly number[]) => number,
  rounds = 2_000,
  seed = 1,
): Estimate {
  const n = Math.min(a.length, b.length);
  const random = createRng(seed);
  const stats: number[] = [];
  const ra = new Array<number>(n);
  const rb = new Array<number>(n);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < n; i++) {
      const k = Math.floor(random() * n);
      ra[i] = a[k]!;
      rb[i] = b[k]!;
    }
    stats.push(stat(ra, rb));
  }
  stats.sort((x, y) => x - y);
  return {
    value: stat(a.slice(0, n), b.slice(0, n)),
    low: quantile(stats, 0.025),
    high: quantile(stats, 0.975),
  };
}

/** Median of the per-pair differences `a[i] − b[i]`. */
export function medianOfDifferences(a: readonly number[], b: readonly number[]): number {
  return median(a.map((v, i) => v - b[i]!));
}

/** Difference of the medians, `median(a) − median(b)` (pairing unused). */
export function differenceOfMedians(a: readonly number[], b: readonly number[]): number {
  return median(a) - median(b);
}

export function formatEstimate(e: Estimate, digits = 0): string {
  return `${e.value.toFixed(digits)} [${e.low.toFixed(digits)}, ${e.high.toFixed(digits)}]`;
}
