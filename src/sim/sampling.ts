/** Seeded sampling for the simulator: Poisson counts and a Zipf sampler over a finite catalog. */
import type { Rng } from "../util/rng.js";

/** Poisson(mean) by inversion (means here are small: tens per slot at most). */
export function poisson(rng: Rng, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 60) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(rng)));
  const l = Math.exp(-mean);
  let k = 0;
  let p = rng();
  while (p > l) {
    k++;
    p *= rng();
  }
  return k;
}

function normal(rng: Rng): number {
  const u1 = 1 - rng();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rng());
}

/** Samples ranks 0..n−1 with P(rank r) ∝ (r+1)^−skew (skew 0 is uniform). */
export class Zipf {
  private readonly cdf: Float64Array;

  constructor(n: number, skew: number) {
    this.cdf = new Float64Array(n);
    let sum = 0;
    for (let r = 0; r < n; r++) {
      sum += 1 / Math.pow(r + 1, skew);
      this.cdf[r] = sum;
    }
    for (let r = 0; r < n; r++) this.cdf[r]! /= sum;
  }

  sample(rng: Rng): number {
    const u = rng();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
