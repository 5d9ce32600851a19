/**
 * A distribution-free confidence interval for a quantile from n samples: order statistics X_(l) and X_(u)
 * with P(X_(l) <= ξ_q < X_(u)) >= level, read from the number of samples below ξ_q, Binomial(n, q), with
 * at most (1 − level) / 2 in each tail. With n fan-outs a p99 is the largest or second largest of them,
 * and whether the true p99 lies beyond the largest one is nearly a coin toss (0.99^n): then the interval
 * has no upper end (`hiMs` null), and says so rather than pretending the largest sample bounds it.
 */

/** The interval's ends (ms); null where n samples cannot bound that side at the level. */
export interface QuantileInterval {
  readonly level: number;
  readonly loMs: number | null;
  readonly hiMs: number | null;
}

/** The interval of the `q`-quantile of ascending `sorted` at `level` (e.g. 0.95). */
export function quantileInterval(sorted: readonly number[], q: number, level = 0.95): QuantileInterval {
  const n = sorted.length;
  const tail = (1 - level) / 2;
  const pmf = binomialPmf(n, q);
  // lo: the largest l (1-based) with P(B < l) <= tail; hi: the smallest u with P(B >= u) <= tail
  let below = 0;
  let l = 0;
  for (let k = 0; k < n; k++) {
    below += pmf[k] as number;
    if (below > tail) break;
    l = k + 1;
  }
  let above = 0;
  let u = n + 1;
  for (let k = n; k >= 1; k--) {
    above += pmf[k] as number;
    if (above > tail) break;
    u = k;
  }
  return {
    level,
    loMs: l >= 1 ? (sorted[l - 1] as number) : null,
    hiMs: u <= n ? (sorted[u - 1] as number) : null,
  };
}

/** P(B = k) for k = 0..n, B ~ Binomial(n, p), by the ratio of successive terms from the mode (no overflow). */
function binomialPmf(n: number, p: number): Float64Array {
  const out = new Float64Array(n + 1);
  if (p <= 0 || p >= 1) {
    out[p <= 0 ? 0 : n] = 1;
    return out;
  }
  const mode = Math.min(n, Math.floor((n + 1) * p));
  out[mode] = 1;
  for (let k = mode; k < n; k++) out[k + 1] = ((out[k] as number) * (n - k) * p) / ((k + 1) * (1 - p));
  for (let k = mode; k > 0; k--) out[k - 1] = ((out[k] as number) * k * (1 - p)) / ((n - k + 1) * p);
  let sum = 0;
  for (let k = 0; k <= n; k++) sum += out[k] as number;
  for (let k = 0; k <= n; k++) out[k] = (out[k] as number) / sum;
  return out;
}
