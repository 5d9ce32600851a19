/** Run metrics of the slotted simulator: stability test, tail delay, and the Table I figures. */
import { nearestRank } from "../util/nearest-rank.js";
import { STABILITY } from "./params.js";

export interface RunMetrics {
  readonly policy: string;
  readonly load: number;
  /** Least-squares slope of total backlog over the post-warm-up slots, units per slot. */
  readonly slope: number;
  readonly meanBacklog: number;
  readonly stable: boolean;
  /** Quality-adjusted penalty (service + transfer) per served unit. */
  readonly penalty: number;
  /** P95 end-to-end delay of requests that arrived after warm-up and completed, slots. */
  readonly p95Delay: number;
  /** Memory-eligible services that found a compatible resident object. */
  readonly hitRatio: number;
  /** Memory insertions plus evictions per served unit. */
  readonly churn: number;
  /** Work per served unit. */
  readonly workPerUnit: number;
  /** Successor (downstream) jobs created per completed request. */
  readonly downstreamPerRequest: number;
  /** Completed requests over arrived requests, after warm-up. */
  readonly completionRatio: number;
}

/** Least-squares slope of `ys` against their index. */
export function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const mx = (n - 1) / 2;
  let my = 0;
  for (const y of ys) my += y;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = i - mx;
    sxy += dx * (ys[i]! - my);
    sxx += dx * dx;
  }
  return sxy / sxx;
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

export function sd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return Math.sqrt(s / (xs.length - 1));
}

/** Nearest-rank quantile of an unsorted sample (NaN when empty). */
export function quantile(xs: readonly number[], q: number): number {
  return (
    nearestRank(
      [...xs].sort((a, b) => a - b),
      q,
    ) ?? NaN
  );
}

/** The paper's test: slope below 0.035 and mean backlog below 120. */
export function isStable(slopeValue: number, meanBacklog: number): boolean {
  return slopeValue < STABILITY.maxSlope && meanBacklog < STABILITY.maxMeanBacklog;
}
