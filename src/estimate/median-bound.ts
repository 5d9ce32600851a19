/**
 * The test behind the p50 floor (`CensoredCdf.p50FloorMs`): a one-sided binomial lower confidence
 * bound for a median. If the true median were at or below t, each observation deciding t would reach t
 * with probability at most ½; so when at least `above` of `n` do, with P(Bin(n, ½) >= above) <= α, the
 * median is above t at confidence 1 − α (the sign test).
 */

/**
 * α, the chance the floor overstates the p50 of one source. A constant, not an option: it is the rule's
 * meaning of "at least", not a deployment's tuning. 0.1 needs 4 observations, all at or beyond t
 * (0.5⁴ = 0.0625; 0.5³ > 0.1), and drops the floor's false degrades (a sample median: ~¼ on 2) to at most
 * one in ten per source.
 */
export const P50_FLOOR_ALPHA = 0.1;

/** Observations past which the counts are scaled down to this many: a weaker test, still a valid one. */
const MAX_EXACT = 1024;

/**
 * critical[n]: the fewest of n observations reaching t that place the median above t (n + 1: none); 0
 * where not yet computed. Each is computed on first use (up to n / 2 terms), not all at once: the whole
 * table takes tens of ms, a stall a 20 ms budget would miss.
 */
const critical = new Int32Array(MAX_EXACT + 1);

function criticalCount(n: number): number {
  const known = critical[n] as number;
  if (known > 0) return known;
  const logAlpha = Math.log(P50_FLOOR_ALPHA);
  // sum P(X = i) from i = n down, in logs: P(X = n) = 2^-n underflows past n = 1074
  let logTerm = -n * Math.LN2;
  let logTail = logTerm;
  let a = n + 1;
  for (let i = n; i >= 0 && logTail <= logAlpha; i--) {
    a = i;
    if (i === 0) break;
    logTerm += Math.log(i / (n - i + 1));
    const hi = Math.max(logTail, logTerm);
    logTail = hi + Math.log(Math.exp(logTail - hi) + Math.exp(logTerm - hi));
  }
  critical[n] = a;
  return a;
}

/**
 * True when `above` of `above + below` observations reaching t place the median above t at confidence
 * 1 − `P50_FLOOR_ALPHA`. Weights are rounded to counts.
 */
export function medianAbove(above: number, below: number): boolean {
  let a = Math.round(above);
  let n = a + Math.round(below);
  if (n > MAX_EXACT) {
    a = Math.floor((a * MAX_EXACT) / n);
    n = MAX_EXACT;
  }
  return a >= criticalCount(n);
}
