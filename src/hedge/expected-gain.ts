/**
 * What a backup is worth, from the two replicas' censored CDFs (assumed independent: a stall shared by
 * both makes the real gain smaller, and the ledger then sees the cost). With the primary out for `age`
 * and R ms to the deadline, X its residual latency (S_X(u) = S_p(age + u) / S_p(age)) and Y the backup's:
 *   gain = E[min(X, R)] − E[min(X, Y, R)] = ∫₀ᴿ S_X(u) · (1 − S_Y(u)) du      (caller ms saved)
 *   work = E[min(X, Y, R)]               = ∫₀ᴿ S_X(u) · S_Y(u) du              (the backup's run time)
 * The miss probability is S_X(R). `tailGainSchedule` gives these for a backup sent now and at each later
 * step, with the chance the primary is still out then, so a rule can wait rather than spend a backup on
 * a primary that would most likely answer in the next few ms.
 */
import type { PeerId } from "../estimate/types.js";

/** Grid steps over the remaining budget. */
export const STEPS = 48;

export interface TailGainSchedule {
  /** Step, ms: entry j is a backup sent j·h ms from now. */
  readonly stepMs: number;
  /** P(primary still out at step j | out now). */
  readonly stillOut: Float64Array;
  /** P(primary misses the deadline | out at step j). */
  readonly miss: Float64Array;
  readonly gainMs: Float64Array;
  readonly workMs: Float64Array;
}

export function tailGainSchedule(
  cdf: (peer: PeerId, tMs: number) => number,
  primary: PeerId,
  ageMs: number,
  backup: PeerId,
  remainingMs: number,
): TailGainSchedule {
  const h = Math.max(remainingMs, 0) / STEPS;
  const sP = new Float64Array(STEPS + 1);
  const sB = new Float64Array(STEPS + 1);
  for (let i = 0; i <= STEPS; i++) {
    sP[i] = clamp(1 - cdf(primary, ageMs + i * h));
    sB[i] = clamp(1 - cdf(backup, (i + 0.5) * h));
  }
  const stillOut = new Float64Array(STEPS);
  const miss = new Float64Array(STEPS);
  const gainMs = new Float64Array(STEPS);
  const workMs = new Float64Array(STEPS);
  const out0 = sP[0] as number;
  for (let j = 0; j < STEPS; j++) {
    const outJ = sP[j] as number;
    // past every mass the CDF holds the residual is unknown and long: the conditional tail is 1
    const x = (i: number): number => (outJ <= 1e-9 ? 1 : Math.min(1, (sP[i] as number) / outJ));
    stillOut[j] = out0 <= 1e-9 ? 1 : Math.min(1, outJ / out0);
    let gain = 0;
    let work = 0;
    for (let i = j; i < STEPS; i++) {
      // residual u = (i − j)·h, midpoint between grid points i and i + 1; backup age (i − j + 0.5)·h
      const sx = (x(i) + x(i + 1)) / 2;
      const sy = sB[i - j] as number;
      gain += sx * (1 - sy) * h;
      work += sx * sy * h;
    }
    miss[j] = x(STEPS);
    gainMs[j] = gain;
    workMs[j] = work;
  }
  return { stepMs: h, stillOut, miss, gainMs, workMs };
}

function clamp(s: number): number {
  return Math.min(1, Math.max(0, s));
}

/** Smallest t (ms, to 0.01 ms) with cdf(peer, t) >= q; NaN when the CDF never reaches q below 10⁷ ms. */
export function quantileOf(cdf: (peer: PeerId, tMs: number) => number, peer: PeerId, q: number): number {
  let hi = 1;
  while (cdf(peer, hi) < q) {
    hi *= 2;
    if (hi > 1e7) return NaN;
  }
  let lo = 0;
  while (hi - lo > 0.01) {
    const mid = (lo + hi) / 2;
    if (cdf(peer, mid) >= q) hi = mid;
    else lo = mid;
  }
  return hi;
}
