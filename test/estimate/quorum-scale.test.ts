import { describe, expect, it } from "vitest";
import {
  exactTail,
  fanoutCdfAt,
  fanoutQuantile,
  fanoutQuantileKind,
  fanoutQuantiles,
  refinedNormalTail,
} from "../../src/estimate/fanout.js";
import type { CdfLike } from "../../src/estimate/fanout.js";
import { createRng, logNormal } from "../../src/util/rng.js";
import { sortedQuantile } from "./helpers.js";

/** Stated tolerance of the refined normal tail against the exact Poisson-binomial, in probability. */
const TAIL_TOLERANCE = 0.005;

/** A log-normal CDF (median ms, sigma) as the fan-out reads it. */
function logNormalCdf(median: number, sigma: number): CdfLike {
  const erf = (x: number): number => {
    const t = 1 / (1 + 0.3275911 * Math.abs(x));
    const y =
      1 -
      ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
        t *
        Math.exp(-x * x);
    return x >= 0 ? y : -y;
  };
  return {
    at: (t) => (t <= 0 ? 0 : 0.5 * (1 + erf(Math.log(t / median) / (sigma * Math.SQRT2)))),
    minX: median * Math.exp(-6 * sigma),
    maxX: median * Math.exp(6 * sigma),
  };
}

function peers(n: number, seed: number): [number, number][] {
  const rng = createRng(seed);
  return Array.from({ length: n }, () => [5 + rng() * 40, 0.2 + rng() * 0.8] as [number, number]);
}

describe("k-of-n at scale: the refined normal tail", () => {
  it(`is within ${TAIL_TOLERANCE} of the exact Poisson-binomial for 60 <= n <= 200 and min(k, n − k) >= 20`, () => {
    const rng = createRng(4);
    let worst = 0;
    for (let trial = 0; trial < 200; trial++) {
      const n = 60 + Math.floor(rng() * 141);
      const k = 20 + Math.floor(rng() * (n - 40));
      const ps = new Float64Array(n);
      const spread = rng();
      const centre = rng();
      for (let i = 0; i < n; i++) ps[i] = Math.min(0.999, Math.max(0.001, centre + (rng() - 0.5) * spread));
      const d = Math.abs(refinedNormalTail(ps, n, k) - exactTail(ps, n, k));
      worst = Math.max(worst, d);
    }
    expect(worst).toBeLessThan(TAIL_TOLERANCE);
  });

  it("gives the p50 and p99 of 501 of 1,000 heterogeneous peers within 1 % of a Monte Carlo", () => {
    const spec = peers(1_000, 11);
    const cdfs = spec.map(([m, s]) => logNormalCdf(m, s));
    const k = 501;
    const requirement = { kind: "quorum", k } as const;
    const p50 = fanoutQuantile(cdfs, requirement, 0.5);
    const p99 = fanoutQuantile(cdfs, requirement, 0.99);
    const rng = createRng(12);
    const trials = 4_000;
    const out = new Float64Array(trials);
    const draw = new Float64Array(spec.length);
    for (let t = 0; t < trials; t++) {
      for (let i = 0; i < spec.length; i++) draw[i] = logNormal(rng, spec[i]![0], spec[i]![1]);
      draw.sort();
      out[t] = draw[k - 1]!;
    }
    out.sort();
    // 4,000 trials put the Monte Carlo p99 within ≈ 0.5 % here (the k-th order statistic is narrow)
    expect(Math.abs(p50 / sortedQuantile(out, 0.5) - 1)).toBeLessThan(0.01);
    expect(Math.abs(p99 / sortedQuantile(out, 0.99) - 1)).toBeLessThan(0.01);
  });

  it("stays monotone in k at n = 1,000", () => {
    const cdfs = peers(1_000, 13).map(([m, s]) => logNormalCdf(m, s));
    let last = 0;
    for (const k of [100, 300, 499, 500, 501, 502, 700, 900]) {
      const p99 = fanoutQuantile(cdfs, { kind: "quorum", k }, 0.99);
      expect(p99).toBeGreaterThanOrEqual(last);
      last = p99;
    }
  });

  it("gives the same quantiles whatever the hint the search starts from", () => {
    const rng = createRng(14);
    for (const [n, k] of [
      [40, 21],
      [300, 151],
      [1_000, 501],
      [1_000, 1_000],
    ] as const) {
      const cdfs = peers(n, 15 + n).map(([m, s]) => logNormalCdf(m, s));
      const requirement = k === n ? ({ kind: "all" } as const) : ({ kind: "quorum", k } as const);
      const plain = fanoutQuantiles(cdfs, requirement);
      for (let trial = 0; trial < 12; trial++) {
        const hint = { p50Ms: plain.p50Ms * Math.exp((rng() - 0.5) * 6), p99Ms: 0.01 + rng() * 500 };
        expect(fanoutQuantiles(cdfs, requirement, hint)).toEqual(plain);
        expect(fanoutQuantile(cdfs, requirement, 0.99, hint.p99Ms)).toBe(plain.p99Ms);
      }
      expect(fanoutQuantiles(cdfs, requirement, { p50Ms: NaN, p99Ms: -1 })).toEqual(plain);
    }
  });

  it("reads a large set's crossing from interpolated moments within 1e-3 of its fan-out CDF's own", () => {
    let worst = 0;
    for (const [n, k] of [
      [201, 101],
      [300, 30],
      [500, 50],
      [500, 250],
      [1_000, 100],
      [1_000, 501],
      [1_000, 900],
      [1_000, 990],
      [2_000, 1_001],
    ] as const) {
      const cdfs = peers(n, 16 + n + k).map(([m, s]) => logNormalCdf(m, s));
      const requirement = { kind: "quorum", k } as const;
      for (const q of [0.5, 0.9, 0.99]) {
        // the crossing of the same fan-out CDF, by 80 bisection steps
        let a = 0.001;
        let b = 10_000;
        for (let step = 0; step < 80; step++) {
          const mid = Math.sqrt(a * b);
          if (fanoutCdfAt(cdfs, requirement, mid) >= q) b = mid;
          else a = mid;
        }
        worst = Math.max(worst, Math.abs(fanoutQuantile(cdfs, requirement, q) / b - 1));
      }
    }
    expect(worst).toBeLessThan(1e-3);
  });

  it("reads a 501-of-1,000 quantile pair in at most 5 passes over the members from the last estimate, 10 without", () => {
    const base = peers(1_000, 19).map(([m, s]) => logNormalCdf(m, s));
    let reads = 0;
    const cdfs: CdfLike[] = base.map((c) => ({
      ...c,
      at: (t: number): number => {
        reads++;
        return c.at(t);
      },
    }));
    const requirement = { kind: "quorum", k: 501 } as const;
    const first = fanoutQuantiles(cdfs, requirement);
    expect(reads).toBeLessThanOrEqual(10 * 1_000);
    reads = 0;
    // the last estimate a little off, as after the members' windows moved
    expect(
      fanoutQuantiles(cdfs, requirement, { p50Ms: first.p50Ms * 1.05, p99Ms: first.p99Ms * 0.97 }),
    ).toEqual(first);
    expect(reads).toBeLessThanOrEqual(5 * 1_000);
  });

  it("keeps a large set's lower bounds: at or beyond the horizon exactly when the crossing rests on censored mass (property)", () => {
    const rng = createRng(20);
    for (let trial = 0; trial < 12; trial++) {
      const n = 300 + Math.floor(rng() * 700);
      const k = 1 + Math.floor(rng() * (n - 1));
      const spec = peers(n, 30 + trial);
      // members whose calls are cut at one deadline: the mass beyond it counted as done there (a CDF too high
      // from the horizon on), most with some completions beyond their horizon's mass (a horizon > the bulk)
      const deadline = 5 + rng() * 60;
      const censoredShare = rng() * 0.6;
      const truth = spec.map(([m, s]) => logNormalCdf(m, s));
      const cut: CdfLike[] = truth.map((c, i) => {
        const cutHere = i % 3 === 0;
        return {
          at: (t) =>
            cutHere && t >= deadline ? Math.max(c.at(t), 1 - censoredShare * (1 - c.at(deadline))) : c.at(t),
          minX: c.minX,
          maxX: c.maxX,
          horizonMs: cutHere ? deadline : Infinity,
          completedCount: 1_000,
        };
      });
      const requirement = { kind: "quorum", k } as const;
      const est = fanoutQuantiles(cut, requirement);
      const real = fanoutQuantiles(truth, requirement);
      expect(est.horizonMs).toBe(deadline);
      for (const [value, kind, exact] of [
        [est.p50Ms, est.p50Kind, real.p50Ms],
        [est.p99Ms, est.p99Kind, real.p99Ms],
      ] as const) {
        expect(kind).toBe(value >= deadline ? "lower-bound" : "known");
        // below the horizon the cut CDFs are the truth's: the same quantile; from it on, at most the truth's
        if (value < deadline) expect(Math.abs(value / exact - 1)).toBeLessThan(1e-3);
        else expect(value).toBeLessThanOrEqual(exact * (1 + 1e-3));
      }
    }
  });

  it("calls of 1,000 peers cut at one deadline put the 501-of-1,000 lower bound at the deadline, not just below it", () => {
    const deadline = 6.5;
    // every member's calls all cut at the deadline but a few completions well before it
    const cdfs: CdfLike[] = peers(1_000, 21).map(([m]) => ({
      at: (t) => (t >= deadline ? 1 : Math.min(0.2, (0.2 * t) / m)),
      minX: 0.01,
      maxX: deadline,
      horizonMs: deadline,
      completedCount: 1_000,
    }));
    const f = fanoutQuantiles(cdfs, { kind: "quorum", k: 501 });
    expect(f).toMatchObject({
      p50Ms: deadline,
      p99Ms: deadline,
      p50Kind: "lower-bound",
      p99Kind: "lower-bound",
    });
  });

  it("decides a quantile's kind from the search's own reads as a pass over the members at the value does", () => {
    const rng = createRng(17);
    const kinds = new Set<string>();
    for (const [n, k] of [
      [40, 21],
      [40, 40],
      [1_000, 501],
      [1_000, 1_000],
    ] as const) {
      const requirement = k === n ? ({ kind: "all" } as const) : ({ kind: "quorum", k } as const);
      // completion counts scaled so that the completions expected beyond p50 and p99 lie around 1
      for (const scale of [1e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 1, 100]) {
        const cdfs = peers(n, 18 + n).map(([m, s]) => ({
          ...logNormalCdf(m, s),
          completedCount: scale * (0.5 + rng()),
        }));
        const f = fanoutQuantiles(cdfs, requirement);
        expect(f.p50Kind).toBe(fanoutQuantileKind(cdfs, f.p50Ms, f.horizonMs));
        expect(f.p99Kind).toBe(fanoutQuantileKind(cdfs, f.p99Ms, f.horizonMs));
        kinds.add(f.p50Kind).add(f.p99Kind);
      }
    }
    expect([...kinds].sort()).toEqual(["known", "lower-bound"]);
  });
});
