import { invalid } from "../errors.js";
import type { QuantileKind, Requirement } from "./types.js";
import { requiredAnswers } from "./types.js";

/** What the fan-out needs of a per-peer CDF: P(latency <= t ms) and the range where it rises. */
export interface CdfLike {
  at(tMs: number): number;
  readonly minX: number;
  readonly maxX: number;
  /**
   * From here on (ms) the CDF counts censored mass as done at its censoring time, so it is too high and a
   * quantile there is a lower bound (`CensoredCdf.horizonMs`). Absent or Infinity: known everywhere.
   */
  readonly horizonMs?: number;
  /** Completed observations the CDF rests on (`CensoredCdf.completedCount`). Absent: not counted. */
  readonly completedCount?: number;
}

/**
 * The fan-out's horizon: the smallest horizon among the CDFs (Infinity when none is finite).
 *
 * Why the smallest. All-of-n Π F_i(t) and the k-of-n Poisson-binomial tail are non-decreasing in each
 * F_i(t). Below every member's horizon each F_i(t) is its estimate proper, so the fan-out CDF is too. At or
 * beyond the smallest one, h, that member's F_i(t) is too high (its censored tail mass counted as done),
 * so the fan-out CDF may be too high, never too low: a fan-out quantile at or beyond h is a lower bound,
 * and one below h rests on proper estimates only.
 */
export function fanoutHorizon(cdfs: readonly CdfLike[]): number {
  let h = Infinity;
  for (let i = 0; i < cdfs.length; i++) {
    const x = (cdfs[i] as CdfLike).horizonMs;
    if (x !== undefined && x < h) h = x;
  }
  return h;
}

/**
 * The shared grid: log-spaced points `GRID_START_MS · 10^(g / POINTS_PER_DECADE)`, the same for every peer
 * set, so that a quantile is located in the same grid cell structure whatever the set (which keeps the
 * result monotone in the set and in k — see `fanoutQuantile`).
 */
const GRID_START_MS = 0.0005;
const POINTS_PER_DECADE = 16;
/** Bisection steps inside a grid cell (cell ratio 1.155; 10 steps: ≈ 1.5e-4 relative resolution). */
const BISECTION_DEPTH = 10;
/**
 * Sets of more than `LARGE_SET` peers take `LARGE_SET_DEPTH` steps (a sub-cell 1.8 % wide) and read the
 * crossing inside it in logit space: their fan-out CDF is a smooth sum over many peers, near-logistic in t
 * across the sub-cell, and each step is a pass over every peer.
 */
const LARGE_SET = 200;
const LARGE_SET_DEPTH = 3;

function gridPoint(g: number): number {
  return GRID_START_MS * Math.pow(10, g / POINTS_PER_DECADE);
}

function gridIndexBelow(tMs: number): number {
  return Math.max(0, Math.floor(Math.log10(tMs / GRID_START_MS) * POINTS_PER_DECADE) - 1);
}

function gridIndexAbove(tMs: number): number {
  return Math.max(1, Math.ceil(Math.log10(tMs / GRID_START_MS) * POINTS_PER_DECADE) + 1);
}

let scratch = new Float64Array(64);

function ensureScratch(n: number): Float64Array {
  if (scratch.length < n) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  return scratch;
}

/** Throws INVALID_ARGUMENT unless the requirement fits a set of `n` peers. */
export function checkRequirement(requirement: Requirement, n: number): void {
  if (requirement.kind === "all") return;
  const k = requirement.k;
  if (!Number.isInteger(k) || k < 1 || k > n) {
    throw invalid("requirement.k", k, `an integer >= 1 <= ${n} (the size of the peer set)`);
  }
}

/**
 * Σ n_i · (1 − F_i(t)) over the members of the last pass (completions expected beyond t, the sum
 * `fanoutQuantileKind` compares with 1); NaN when that pass stopped early or a member does not count its
 * completions. Summed by every pass, so a pass costs one multiply-add more per peer and the kind needs no
 * pass of its own.
 */
let lastBeyond = 0;
/**
 * The moments of the last k-of-n pass, k-independent: the mean count answered (a peer certain to have
 * answered counts 1), its variance and third central moment. `lastNormal` is true when that pass used the
 * refined normal approximation (`refinedNormalTail`), which rests on these moments only.
 */
let lastMean = 0;
let lastVariance = 0;
let lastThird = 0;
let lastNormal = false;

/**
 * P(the requirement is met by time `tMs`): for all-of-n the product Π F_i(t) (independence; conservative
 * when peer tails are positively correlated), for any k of n the Poisson-binomial tail P(#answered >= k).
 * An empty set has answered at once (1).
 */
export function fanoutCdfAt(cdfs: readonly CdfLike[], requirement: Requirement, tMs: number): number {
  return evaluate(cdfs, requirement, tMs, readCounts(cdfs));
}

let countBuffer = new Float64Array(64);

/**
 * The members' completed observations (`counts[i]`, NaN when member i does not count them), read once per
 * search rather than at every point. The array is scratch: valid until the next call.
 */
function readCounts(cdfs: readonly CdfLike[]): Float64Array {
  const n = cdfs.length;
  if (countBuffer.length < n) countBuffer = new Float64Array(Math.max(n, countBuffer.length * 2));
  for (let i = 0; i < n; i++) countBuffer[i] = (cdfs[i] as CdfLike).completedCount ?? NaN;
  return countBuffer;
}

/** `fanoutCdfAt` with the members' completion counts read beforehand (`readCounts`). */
function evaluate(
  cdfs: readonly CdfLike[],
  requirement: Requirement,
  tMs: number,
  counts: Float64Array,
): number {
  lastNormal = false;
  const n = cdfs.length;
  const k = requiredAnswers(requirement, n);
  // `beyond` is summed in a local: a module variable would box every partial sum
  let beyond = 0;
  if (k >= n) {
    let product = 1;
    let i = 0;
    for (; i < n && product > 0; i++) {
      const p = (cdfs[i] as CdfLike).at(tMs);
      beyond += (counts[i] as number) * (1 - p);
      product *= p;
    }
    lastBeyond = i < n ? NaN : beyond;
    return product;
  }
  if (k <= 1) {
    let none = 1;
    let i = 0;
    for (; i < n && none > 0; i++) {
      const p = (cdfs[i] as CdfLike).at(tMs);
      beyond += (counts[i] as number) * (1 - p);
      none *= 1 - p;
    }
    lastBeyond = i < n ? NaN : beyond;
    return 1 - none;
  }
  return poissonBinomialTail(cdfs, k, tMs, counts);
}

/**
 * Work (peers × states) up to which the Poisson-binomial tail is computed exactly: every set of up to 200
 * peers (101 of 200 is 200 × 100), and larger ones whose uncertain peers or margin are few. Past it the
 * refined normal approximation is used (`refinedNormalTail`).
 */
export const EXACT_TAIL_WORK = 20_000;

/** A probability this close to 0 or 1 is taken as certain (the peer surely has or has not answered). */
const CERTAIN = 1e-12;

let probabilities = new Float64Array(64);

/**
 * P(at least k of the n independent events with probabilities F_i(t)). Peers certain at t (F_i within
 * 1e-12 of 0 or 1) shift k instead of entering the sum; the rest are summed exactly in
 * O(m · min(k', m − k' + 1)) while that is at most `EXACT_TAIL_WORK`, else by the refined normal
 * approximation in O(m), whose moments it leaves in `lastMean`, `lastVariance`, `lastThird`.
 */
function poissonBinomialTail(cdfs: readonly CdfLike[], k: number, tMs: number, counts: Float64Array): number {
  pointTimes[0] = tMs;
  readAt(cdfs, counts, pointTimes, 1);
  return tailOfColumn(cdfs.length, k, 0);
}

/**
 * Up to `MAX_POINTS` points read by one pass over the members (`readAt`): member i's F_i at point j is
 * `columns[j · n + i]`, and Σ n_i · (1 − F_i) at point j is `columnBeyond[j]`. Scratch, as `probabilities`.
 */
const MAX_POINTS = 4;
let columns = new Float64Array(64 * MAX_POINTS);
const columnBeyond = new Float64Array(MAX_POINTS);
const pointTimes = new Float64Array(MAX_POINTS);

/**
 * Reads every member at the first `count` times of `ts` (ascending), member by member: a member's reads
 * for all the points run together, while its window and segments are in cache and its segment cursor steps
 * on from the point before, not one pass over the whole set per point. Values and sums are those of
 * `count` separate passes: a read's value does not depend on the reads before it, and the sums run in
 * member order.
 */
function readAt(cdfs: readonly CdfLike[], counts: Float64Array, ts: Float64Array, count: number): void {
  const n = cdfs.length;
  if (columns.length < n * count) columns = new Float64Array(Math.max(n * MAX_POINTS, columns.length * 2));
  const cols = columns;
  columnBeyond.fill(0);
  for (let i = 0; i < n; i++) {
    const c = cdfs[i] as CdfLike;
    const ci = counts[i] as number;
    for (let j = 0; j < count; j++) {
      const p = c.at(ts[j] as number);
      columnBeyond[j] = (columnBeyond[j] as number) + ci * (1 - p);
      cols[j * n + i] = p;
    }
  }
}

/** The k-of-n tail from point j of the last `readAt` (see `poissonBinomialTail`), leaving `lastBeyond` and the moments. */
function tailOfColumn(n: number, k: number, j: number): number {
  lastNormal = false;
  if (probabilities.length < n) probabilities = new Float64Array(Math.max(n, probabilities.length * 2));
  const ps = probabilities;
  const cols = columns;
  const base = j * n;
  let m = 0;
  let need = k;
  for (let i = 0; i < n; i++) {
    const p = cols[base + i] as number;
    if (p >= 1 - CERTAIN) need--;
    else if (p > CERTAIN) ps[m++] = p;
  }
  lastBeyond = columnBeyond[j] as number;
  if (need <= 0) return 1;
  if (need > m) return 0;
  if (m * Math.min(need, m - need + 1) <= EXACT_TAIL_WORK) return exactTail(ps, m, need);
  lastNormal = true;
  // the certain peers answered: they add to the count's mean, not to its spread
  setMoments(ps, m, k - need);
  return normalTail(lastMean, lastVariance, lastThird, k);
}

/** P(at least k of the first m events of `ps`), exactly; O(m · min(k, m − k + 1)). */
export function exactTail(ps: Float64Array, m: number, k: number): number {
  const misses = m - k; // at most this many may be missing
  if (k <= misses + 1) return countUpTo(ps, m, k, false)[k] as number;
  const dp = countUpTo(ps, m, misses + 1, true);
  let ok = 0;
  for (let j = 0; j <= misses; j++) ok += dp[j] as number;
  return ok;
}

/**
 * The distribution of how many of the first m events of `ps` happened (or, with `missed`, did not),
 * counted up to `cap`: dp[j] = P(j) for j < cap and dp[cap] = P(cap or more), absorbing. O(m · cap), so
 * `exactTail` counts whichever side is shorter. The array is scratch: read it before the next call.
 */
function countUpTo(ps: Float64Array, m: number, cap: number, missed: boolean): Float64Array {
  const dp = ensureScratch(cap + 1);
  dp.fill(0, 0, cap + 1);
  dp[0] = 1;
  for (let i = 0; i < m; i++) {
    const p = ps[i] as number;
    const hit = missed ? 1 - p : p;
    const stay = missed ? p : 1 - p;
    const top = Math.min(i + 1, cap);
    if (top === cap) dp[cap] = (dp[cap] as number) + (dp[cap - 1] as number) * hit;
    for (let j = top === cap ? cap - 1 : top; j >= 1; j--)
      dp[j] = (dp[j] as number) * stay + (dp[j - 1] as number) * hit;
    dp[0] = dp[0] * stay;
  }
  return dp;
}

/**
 * P(at least k of the first m events of `ps`) by the refined normal approximation of the Poisson-binomial
 * distribution (Volkova 1996): P(X <= x) ≈ G((x + 0.5 − μ) / σ) with G(z) = Φ(z) + γ (1 − z²) φ(z) / 6,
 * μ = Σ p, σ² = Σ p (1 − p), γ = Σ p (1 − p)(1 − 2p) / σ³ (continuity and skewness corrected). O(m).
 * Against the exact tail its error is ≈ 0.1 / σ² in probability (tested at n ≤ 200; Monte Carlo at 1,000).
 */
export function refinedNormalTail(ps: Float64Array, m: number, k: number): number {
  setMoments(ps, m, 0);
  return normalTail(lastMean, lastVariance, lastThird, k);
}

/**
 * The count's mean (plus `certain`, the events already sure), variance and third central moment over the
 * first m events of `ps`, into `lastMean`, `lastVariance`, `lastThird`.
 */
function setMoments(ps: Float64Array, m: number, certain: number): void {
  let mean = 0;
  let variance = 0;
  let third = 0;
  for (let i = 0; i < m; i++) {
    const p = ps[i] as number;
    const v = p * (1 - p);
    mean += p;
    variance += v;
    third += v * (1 - 2 * p);
  }
  lastMean = mean + certain;
  lastVariance = variance;
  lastThird = third;
}

/** The refined normal P(count >= k) of a count with this mean, variance and third central moment. */
function normalTail(mean: number, variance: number, third: number, k: number): number {
  if (variance <= 0) return mean >= k ? 1 : 0;
  const sigma = Math.sqrt(variance);
  const gamma = third / (variance * sigma);
  const z = (k - 0.5 - mean) / sigma;
  const below = normalCdf(z) + (gamma * (1 - z * z) * Math.exp(-0.5 * z * z)) / (6 * Math.sqrt(2 * Math.PI));
  return Math.min(1, Math.max(0, 1 - below));
}

/** Φ(z), from erfc (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851526 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? 1 - 0.5 * erfc : 0.5 * erfc;
}

/**
 * The `q`-quantile (0 < q < 1) of the time until the requirement is met, in ms. NaN when a CDF is empty,
 * 0 for an empty set.
 *
 * Method: the fan-out CDF is evaluated on the shared log-spaced grid, a binary search finds the grid cell
 * where it crosses q, and the crossing is read inside the cell. Where the four grid points around the
 * cell all took the refined normal approximation (large k-of-n sets), that approximation rests on three
 * moments of the count answered, smooth in t: they are interpolated across the cell (`interpolated`) and
 * the crossing solved on them, with no further pass over the members. Otherwise bisection narrows the cell
 * `BISECTION_DEPTH` times (`LARGE_SET_DEPTH` above `LARGE_SET` peers, read in logit space) and the crossing
 * is interpolated. Because the grid and the points read inside a cell depend on the set's size and the
 * cell only, a pointwise lower fan-out CDF (a larger k, a peer added to an all-of-n set) can only land in
 * the same or a later cell and, inside a bisected cell, cross later: the result is monotone in k, and in
 * the set up to floating-point rounding. Inside a moment-read cell it stays monotone in k (the moments do
 * not depend on k); a slower member moves the interpolated moments, so there it is monotone up to the
 * interpolation's error, as across 200 to 201 peers or from a moment-read cell to a bisected one (each
 * read within 1e-3 of the crossing).
 *
 * Lower bounds. The result is >= the fan-out horizon (`fanoutHorizon`) exactly when the crossing rests on
 * the CDF at or beyond it, i.e. when it is a lower bound: a cell that straddles the horizon is bisected and
 * its final sub-cell split there, so a crossing caused by the censored mass at the horizon (calls cut at
 * one deadline) is reported at the horizon, not interpolated just below it.
 *
 * @example
 * const p99 = fanoutQuantile(peers.map((p) => p.cdf(now)), { kind: "quorum", k: 3 }, 0.99);
 */
export function fanoutQuantile(
  cdfs: readonly CdfLike[],
  requirement: Requirement,
  q: number,
  nearMs?: number,
): number {
  const s = startSearch(cdfs, requirement);
  if (s === undefined) return cdfs.length === 0 ? 0 : NaN;
  const cell = gridCell(s, q, s.span, gridIndexNear(nearMs, s.span));
  return refine(s, q, cell).valueMs;
}

/**
 * Where the quantiles were last time (ms; the same set's previous estimate): the grid search starts there
 * and gallops out. It changes how many points are evaluated, never the result.
 */
export interface QuantileHint {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** p50 and p99 of the fan-out, the pair the policy needs, with what each is and the horizon they were read against. */
export function fanoutQuantiles(
  cdfs: readonly CdfLike[],
  requirement: Requirement,
  hint?: QuantileHint,
): {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p50Kind: QuantileKind;
  readonly p99Kind: QuantileKind;
  readonly horizonMs: number;
} {
  const s = startSearch(cdfs, requirement);
  let p50Ms = cdfs.length === 0 ? 0 : NaN;
  let p99Ms = p50Ms;
  const horizonMs = s?.horizon ?? fanoutHorizon(cdfs);
  let p50Kind = fanoutQuantileKind(cdfs, p50Ms, horizonMs);
  let p99Kind = p50Kind;
  if (s !== undefined) {
    const span = s.span;
    const cell50 = gridCell(s, 0.5, span, gridIndexNear(hint?.p50Ms, span));
    const r50 = refine(s, 0.5, cell50);
    p50Ms = r50.valueMs;
    p50Kind = fanoutQuantileKind(cdfs, p50Ms, horizonMs, r50);
    // the p99 cell is at or after the p50 one: search upwards from it, or from the hint (the same cell a
    // search of the whole span finds, the first grid point where the CDF reaches 0.99, in a few evaluations)
    const above: Cell = {
      gLo: cell50.gHi,
      fLo: cell50.fHi,
      uLo: cell50.uHi,
      gHi: span.gHi,
      fHi: 1,
      uHi: NaN,
    };
    const from: Cell =
      cell50.fHi >= 0.99
        ? cell50
        : gridCell(s, 0.99, above, gridIndexNear(hint?.p99Ms, above) ?? cell50.gHi + 1);
    const r99 = refine(s, 0.99, from);
    p99Ms = r99.valueMs;
    p99Kind = fanoutQuantileKind(cdfs, p99Ms, horizonMs, r99);
  }
  return { p50Ms, p99Ms, p50Kind, p99Kind, horizonMs };
}

/**
 * A span of grid indices, the fan-out CDF at its ends (below `gLo` it is < q, from `gHi` on >= q) and the
 * members' completions beyond each end (`lastBeyond` there; NaN when not read).
 */
interface Cell {
  readonly gLo: number;
  readonly gHi: number;
  readonly fLo: number;
  readonly fHi: number;
  readonly uLo: number;
  readonly uHi: number;
}

/** Where `refine` read the crossing, and the members' completions beyond the ends of its last interval. */
interface Refined {
  readonly valueMs: number;
  /** At a point at or below `valueMs` and at one at or above it (NaN when not read). */
  readonly beyondBelow: number;
  readonly beyondAbove: number;
}

/**
 * One estimate's search: the set, the grid span where its CDF rises (0 below every CDF's first knot, 1
 * beyond every last one), the fan-out horizon, and the members' completion counts, read once here rather
 * than at every point (`counts[i]`, NaN when member i does not count them). `counts` is the module's
 * scratch buffer: valid while no other search or `fanoutCdfAt` runs, which holds since both are
 * synchronous.
 */
interface Search {
  readonly cdfs: readonly CdfLike[];
  readonly requirement: Requirement;
  readonly span: Cell;
  readonly horizon: number;
  readonly counts: Float64Array;
  /** Tags this search's grid points in `memo`; 0 when the span is too wide to memoise. */
  readonly stamp: number;
}

/**
 * The grid points read by the search in progress, by grid index: the stamp of the search that read it,
 * then what the pass left (F, `lastBeyond`, `lastNormal`, the three moments). A quantile pair reads about
 * a dozen points, some twice (p50's and p99's cells, the interpolation's stencil): a repeat costs nothing.
 */
const MEMO_FIELDS = 6;
/** Grid indices memoised: up to 0.0005 × 10^(4096/16) ms, so every span a real CDF has. */
const MEMO_POINTS = 4096;
let memoStamps = new Float64Array(256);
let memo = new Float64Array(256 * MEMO_FIELDS);
let searches = 0;

/** Starts a search of the set's fan-out CDF; undefined for an empty set or when a CDF is empty. */
function startSearch(cdfs: readonly CdfLike[], requirement: Requirement): Search | undefined {
  const n = cdfs.length;
  checkRequirement(requirement, n);
  if (n === 0) return undefined;
  let lo = Infinity;
  let hi = -Infinity;
  let horizon = Infinity;
  for (let i = 0; i < n; i++) {
    const c = cdfs[i] as CdfLike;
    if (!(c.minX >= 0)) return undefined;
    if (c.minX < lo) lo = c.minX;
    if (c.maxX > hi) hi = c.maxX;
    const h = c.horizonMs;
    if (h !== undefined && h < horizon) horizon = h;
  }
  const gHi = gridIndexAbove(Math.max(hi, GRID_START_MS));
  let stamp = 0;
  if (gHi + 2 < MEMO_POINTS) {
    if (memoStamps.length < gHi + 2) {
      memoStamps = new Float64Array(MEMO_POINTS);
      memo = new Float64Array(MEMO_POINTS * MEMO_FIELDS);
    }
    stamp = ++searches;
  }
  const span: Cell = {
    gLo: gridIndexBelow(Math.max(lo, GRID_START_MS)),
    gHi,
    fLo: 0,
    fHi: 1,
    uLo: NaN,
    uHi: NaN,
  };
  return { cdfs, requirement, span, horizon, counts: readCounts(cdfs), stamp };
}

/** The fan-out CDF at grid point g, leaving `lastBeyond`, `lastNormal` and the moments as a pass does. */
function atGrid(s: Search, g: number): number {
  const o = g * MEMO_FIELDS;
  if (s.stamp !== 0 && memoStamps[g] === s.stamp) {
    lastBeyond = memo[o + 1] as number;
    lastNormal = memo[o + 2] === 1;
    lastMean = memo[o + 3] as number;
    lastVariance = memo[o + 4] as number;
    lastThird = memo[o + 5] as number;
    return memo[o] as number;
  }
  const f = evaluate(s.cdfs, s.requirement, gridPoint(g), s.counts);
  remember(s, g, f);
  return f;
}

/** Memoises grid point g of search s: F there and what its pass left. */
function remember(s: Search, g: number, f: number): void {
  if (s.stamp === 0 || g >= memoStamps.length) return;
  const o = g * MEMO_FIELDS;
  memoStamps[g] = s.stamp;
  memo[o] = f;
  memo[o + 1] = lastBeyond;
  memo[o + 2] = lastNormal ? 1 : 0;
  memo[o + 3] = lastMean;
  memo[o + 4] = lastVariance;
  memo[o + 5] = lastThird;
}

const readGrid = new Int32Array(MAX_POINTS);

/**
 * For a k-of-n set of more than `LARGE_SET` peers, reads the grid points `from` … `from + 3` not yet
 * memoised in one pass over the members (`readAt`) and memoises them: the search's next reads (a cell near
 * the hint, then the interpolation's four points around it) land there, and one pass per member replaces
 * one pass over the set per point. Changes which pass reads a point, never its value.
 */
function readAhead(s: Search, from: number): void {
  const { cdfs, requirement } = s;
  const n = cdfs.length;
  if (s.stamp === 0 || n <= LARGE_SET || requirement.kind !== "quorum") return;
  const k = requirement.k;
  if (k <= 1 || k >= n) return;
  let count = 0;
  for (let g = Math.max(from, s.span.gLo); g < from + MAX_POINTS && g <= s.span.gHi; g++) {
    if (g >= memoStamps.length || memoStamps[g] === s.stamp) continue;
    readGrid[count] = g;
    pointTimes[count] = gridPoint(g);
    count++;
  }
  if (count < 2) return;
  readAt(cdfs, s.counts, pointTimes, count);
  for (let j = 0; j < count; j++) remember(s, readGrid[j] as number, tailOfColumn(n, k, j));
}

/** The grid point at or just above `tMs`, when it lies strictly inside `span` (else undefined). */
function gridIndexNear(tMs: number | undefined, span: Cell): number | undefined {
  if (tMs === undefined || !(tMs > 0)) return undefined;
  const g = Math.ceil(Math.log10(tMs / GRID_START_MS) * POINTS_PER_DECADE);
  return g > span.gLo && g < span.gHi ? g : undefined;
}

/**
 * The grid cell where the fan-out CDF crosses q inside `span`: the first grid point where it reaches q and
 * the one before. By bisection of the span, or, from a grid point `near` inside it, by steps doubling
 * away from it (down when the CDF there reaches q, else up) and bisection of the last step: the same cell
 * in a few evaluations when the crossing is near (as p99's is near p50's, or this estimate's near the last).
 */
function gridCell(s: Search, q: number, span: Cell, near?: number): Cell {
  let { gLo, gHi, fLo, fHi, uLo, uHi } = span;
  if (near !== undefined && near > gLo && near < gHi) {
    // the crossing is usually in the cell just below the hint or the one above it
    readAhead(s, near - 2);
    const f0 = atGrid(s, near);
    if (f0 >= q) {
      gHi = near;
      fHi = f0;
      uHi = lastBeyond;
      for (let step = 1; gHi - step > gLo; step *= 2) {
        const g = gHi - step;
        const f = atGrid(s, g);
        if (f < q) {
          gLo = g;
          fLo = f;
          uLo = lastBeyond;
          break;
        }
        gHi = g;
        fHi = f;
        uHi = lastBeyond;
      }
    } else {
      gLo = near;
      fLo = f0;
      uLo = lastBeyond;
      for (let step = 1; gLo + step < gHi; step *= 2) {
        const g = gLo + step;
        const f = atGrid(s, g);
        if (f >= q) {
          gHi = g;
          fHi = f;
          uHi = lastBeyond;
          break;
        }
        gLo = g;
        fLo = f;
        uLo = lastBeyond;
      }
    }
  }
  while (gHi - gLo > 1) {
    const mid = (gLo + gHi) >>> 1;
    const f = atGrid(s, mid);
    if (f >= q) {
      gHi = mid;
      fHi = f;
      uHi = lastBeyond;
    } else {
      gLo = mid;
      fLo = f;
      uLo = lastBeyond;
    }
  }
  return { gLo, gHi, fLo, fHi, uLo, uHi };
}

/**
 * Reads the crossing of q inside its grid cell: from the interpolated moments where they apply
 * (`interpolated`), else by bisection, split at the horizon, and interpolation.
 */
function refine(s: Search, q: number, cell: Cell): Refined {
  const requirement = s.requirement;
  const horizon = s.horizon;
  let { fLo, fHi, uLo, uHi } = cell;
  let a = gridPoint(cell.gLo);
  let b = gridPoint(cell.gHi);
  if (!(a < horizon && horizon <= b) && requirement.kind === "quorum") {
    const valueMs = interpolated(s, requirement.k, q, cell);
    if (valueMs !== undefined) return { valueMs, beyondBelow: uLo, beyondAbove: uHi };
  }
  const { cdfs } = s;
  const large = cdfs.length > LARGE_SET;
  const depth = large ? LARGE_SET_DEPTH : BISECTION_DEPTH;
  for (let step = 0; step < depth; step++) {
    const mid = 0.5 * (a + b);
    const f = evaluate(cdfs, requirement, mid, s.counts);
    if (f >= q) {
      b = mid;
      fHi = f;
      uHi = lastBeyond;
    } else {
      a = mid;
      fLo = f;
      uLo = lastBeyond;
    }
  }
  if (a < horizon && horizon <= b) {
    // split the cell at the horizon: the part below it is proper, the part from it on too high
    const fAt = evaluate(cdfs, requirement, horizon, s.counts);
    if (fAt >= q) {
      const uAt = lastBeyond;
      const below = horizon - Math.max(horizon * 1e-9, 1e-9);
      const fBelow = below > a ? evaluate(cdfs, requirement, below, s.counts) : fLo;
      // the mass at the horizon crosses q: a lower bound, at the horizon
      if (fBelow < q) return { valueMs: horizon, beyondBelow: NaN, beyondAbove: uAt };
      uHi = below > a ? lastBeyond : uLo;
      b = below;
      fHi = fBelow;
    } else {
      a = horizon;
      fLo = fAt;
      uLo = lastBeyond;
    }
  }
  return { valueMs: crossing(q, a, b, fLo, fHi, large), beyondBelow: uLo, beyondAbove: uHi };
}

/** Moments at the interpolation's four grid points (mean, variance, third moment of each). */
const stencil = new Float64Array(12);
/** Bisection steps on the interpolated moments: the cell read to 2^-40 of its width, no member read. */
const MOMENT_STEPS = 40;

/**
 * The crossing of q inside cell (g, g + 1) of a k-of-n set from the moments of the count answered at grid
 * points g − 1 … g + 2: each moment interpolated by the cubic through them (in the grid index, i.e. in
 * log t) and the refined normal tail on them solved for q by bisection. Undefined unless all four points
 * took the refined normal approximation. Two more passes at most, one above 200 members (the cell's ends
 * are read already); within 1e-3 of the crossing of the fan-out CDF itself (test/estimate/quorum-scale.test.ts).
 */
function interpolated(s: Search, k: number, q: number, cell: Cell): number | undefined {
  const g0 = cell.gLo - 1;
  if (g0 < 0 || cell.gHi !== cell.gLo + 1 || s.stamp === 0) return undefined;
  // the cell's ends first: they are memoised, so a set outside the approximation costs no pass here;
  // then the outer two, read ahead in one pass for both (large k-of-n sets)
  for (let r = 0; r < 4; r++) {
    const j = r < 2 ? r + 1 : 3 * (r - 2);
    if (r === 2) readAhead(s, g0);
    atGrid(s, g0 + j);
    if (!lastNormal) return undefined;
    stencil[3 * j] = lastMean;
    stencil[3 * j + 1] = lastVariance;
    stencil[3 * j + 2] = lastThird;
  }
  let lo = 0;
  let hi = 1;
  for (let step = 0; step < MOMENT_STEPS; step++) {
    const u = 0.5 * (lo + hi);
    // Lagrange weights of the nodes −1, 0, 1, 2 at u
    const w0 = (-u * (u - 1) * (u - 2)) / 6;
    const w1 = ((u + 1) * (u - 1) * (u - 2)) / 2;
    const w2 = (-(u + 1) * u * (u - 2)) / 2;
    const w3 = ((u + 1) * u * (u - 1)) / 6;
    const m = stencil;
    const mean =
      w0 * (m[0] as number) + w1 * (m[3] as number) + w2 * (m[6] as number) + w3 * (m[9] as number);
    const variance =
      w0 * (m[1] as number) + w1 * (m[4] as number) + w2 * (m[7] as number) + w3 * (m[10] as number);
    const third =
      w0 * (m[2] as number) + w1 * (m[5] as number) + w2 * (m[8] as number) + w3 * (m[11] as number);
    if (normalTail(mean, variance, third, k) >= q) hi = u;
    else lo = u;
  }
  return GRID_START_MS * Math.pow(10, (cell.gLo + hi) / POINTS_PER_DECADE);
}

/** Where the CDF, `fLo` at `a` and `fHi` at `b`, crosses q: read linearly, or in logit space for a large set. */
function crossing(q: number, a: number, b: number, fLo: number, fHi: number, large: boolean): number {
  if (fHi <= fLo) return b;
  if (large && fLo > 0 && fHi < 1) {
    // logit is increasing, so a pointwise lower CDF still crosses later (monotone as the linear read)
    const lo = logit(fLo);
    return a + ((logit(q) - lo) / (logit(fHi) - lo)) * (b - a);
  }
  return a + ((q - fLo) / (fHi - fLo)) * (b - a);
}

function logit(p: number): number {
  return Math.log(p / (1 - p));
}

/**
 * Completions expected beyond a fan-out quantile for it to be known. The quantile is found by bisection,
 * and a bucket's mass is spread over it: F at the value read may exceed its level by a fraction of a
 * percent of 1 − q (one peer with 100 completions reads ≈ 0.998).
 */
const KNOWN_BEYOND = 0.995;

/** The kind of a fan-out quantile computed by `fanoutQuantile` against `horizonMs` (see there). */
export function quantileKind(valueMs: number, horizonMs: number): QuantileKind {
  return valueMs >= horizonMs ? "lower-bound" : "known";
}

/**
 * The kind of a fan-out quantile `valueMs` of `cdfs`: a lower bound at or beyond the fan-out horizon
 * (`quantileKind`), or when the members' windows expect fewer than one completion beyond it in all,
 * Σ n_i · (1 − F_i(value)) < 1 — the fan-out form of `tooFewFor` (one peer: n · (1 − q) < 1). An
 * all-of-n p99 rests on the members' far tails (Σ (1 − F_i) ≈ 1 %), so it needs about 100 fan-outs in
 * the window, as the set's own observed p99 does. Members that do not count their completions are
 * taken as knowing.
 *
 * The sum falls as the value rises, so the search's own reads around the value (`read`, given as
 * `bracket`) decide it without another pass over the members unless the threshold lies between them.
 */
export function fanoutQuantileKind(
  cdfs: readonly CdfLike[],
  valueMs: number,
  horizonMs: number,
  bracket?: Refined,
): QuantileKind {
  if (quantileKind(valueMs, horizonMs) === "lower-bound") return "lower-bound";
  if (cdfs.length === 0 || !Number.isFinite(valueMs)) return "known";
  if (bracket !== undefined) {
    if (bracket.beyondAbove >= KNOWN_BEYOND) return "known";
    if (bracket.beyondBelow < KNOWN_BEYOND) return "lower-bound";
  }
  let beyond = 0;
  for (let i = 0; i < cdfs.length; i++) {
    const c = cdfs[i] as CdfLike;
    if (c.completedCount === undefined) return "known";
    beyond += c.completedCount * (1 - c.at(valueMs));
  }
  return beyond < KNOWN_BEYOND ? "lower-bound" : "known";
}
