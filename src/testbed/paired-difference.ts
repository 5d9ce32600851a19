/**
 * How far apart two policies are on the same requests, and how sure the run is of it. Every request
 * of the stream goes to its coordinator once per policy (docs/testbed.md), so a measure can be read
 * as a difference per request, a − b, and its mean given with a 95% interval (Student's t): a point
 * estimate alone says nothing of how sure a short run is of it.
 */
import { createRng } from "../util/rng.js";
import type { ScoredCall } from "./score-call.js";
import { round } from "./value-model.js";

export interface PairedDifference {
  /** Requests both policies answered (the pairs the mean is over). */
  readonly pairs: number;
  /** Mean of a − b over the pairs, and its 95% interval. */
  readonly mean: number;
  readonly lo95: number;
  readonly hi95: number;
}

/** What pairs a call with its copy under another policy: its coordinator and request index. */
export type Pairable = Pick<ScoredCall, "coordinator" | "request">;

/** The requests of `a` and `b`, paired by coordinator and request index (stream order). */
export function pairCalls<C extends Pairable>(
  a: readonly C[],
  b: readonly C[],
): readonly (readonly [C, C])[] {
  const byRequest = new Map<string, C>();
  for (const c of b) byRequest.set(`${c.coordinator}#${c.request}`, c);
  const out: (readonly [C, C])[] = [];
  for (const c of a) {
    const other = byRequest.get(`${c.coordinator}#${c.request}`);
    if (other !== undefined) out.push([c, other]);
  }
  return out;
}

/** Mean and 95% interval of the mean (Student's t). */
export interface MeanInterval {
  readonly n: number;
  readonly mean: number;
  readonly lo95: number;
  readonly hi95: number;
}

/** Mean and 95% interval of the mean; null under two values (no spread to read). */
export function meanInterval(xs: readonly number[]): MeanInterval | null {
  const n = xs.length;
  if (n < 2) return null;
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  const half = tQuantile975(n - 1) * Math.sqrt(ss / (n - 1) / n);
  return { n, mean: round(mean, 3), lo95: round(mean - half, 3), hi95: round(mean + half, 3) };
}

/** Mean of f(a) − f(b) over the pairs with its 95% interval; null under two pairs (no spread to read). */
export function pairedDifference<C>(
  pairs: readonly (readonly [C, C])[],
  f: (c: C) => number,
): PairedDifference | null {
  const m = meanInterval(pairs.map(([x, y]) => f(x) - f(y)));
  return m === null ? null : { pairs: m.n, mean: m.mean, lo95: m.lo95, hi95: m.hi95 };
}

/**
 * A ratio of counts over the requests, a − b, on the same requests: Σnum(a)/Σden(a) − Σnum(b)/Σden(b)
 * over the pairs, with a 95% percentile interval from a seeded paired bootstrap (the requests are
 * resampled, both policies' counts with them). For rates whose denominators differ by policy (the
 * committed fan-outs of each), where a per-request difference has no meaning. Null when either
 * denominator is 0 over the pairs, or under two pairs.
 */
export function pairedRatioDifference(
  pairs: readonly (readonly [ScoredCall, ScoredCall])[],
  num: (c: ScoredCall) => number,
  den: (c: ScoredCall) => number,
  resamples = 2000,
): PairedDifference | null {
  const n = pairs.length;
  if (n < 2) return null;
  const cols = [
    pairs.map(([a]) => num(a)),
    pairs.map(([a]) => den(a)),
    pairs.map(([, b]) => num(b)),
    pairs.map(([, b]) => den(b)),
  ] as const;
  const diff = (idx: (i: number) => number): number => {
    let na = 0;
    let da = 0;
    let nb = 0;
    let db = 0;
    for (let i = 0; i < n; i++) {
      const j = idx(i);
      na += cols[0][j]!;
      da += cols[1][j]!;
      nb += cols[2][j]!;
      db += cols[3][j]!;
    }
    return da === 0 || db === 0 ? NaN : na / da - nb / db;
  };
  const mean = diff((i) => i);
  if (!Number.isFinite(mean)) return null;
  const rng = createRng(0x5eed);
  const draws: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const d = diff(() => Math.floor(rng() * n));
    if (Number.isFinite(d)) draws.push(d);
  }
  draws.sort((x, y) => x - y);
  const at = (q: number): number => draws[Math.min(draws.length - 1, Math.floor(q * draws.length))]!;
  return { pairs: n, mean: round(mean, 4), lo95: round(at(0.025), 4), hi95: round(at(0.975), 4) };
}

/**
 * Student's t 97.5% quantile for `df` degrees of freedom: exact table to 30, then the Cornish–Fisher
 * expansion around the normal's 1.96 (within 0.001 of the exact value from 30 on).
 */
export function tQuantile975(df: number): number {
  if (df < 1) return Number.NaN;
  if (df <= T975.length) return T975[df - 1]!;
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df);
}

const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
