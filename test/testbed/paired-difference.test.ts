import { describe, expect, it } from "vitest";
import {
  pairCalls,
  pairedDifference,
  pairedRatioDifference,
  tQuantile975,
} from "../../src/testbed/paired-difference.js";
import type { ScoredCall } from "../../src/testbed/score-call.js";

/** A scored call with only what pairing and the measure read; the rest is zero. */
const call = (policy: string, coordinator: string, request: number, committed: number): ScoredCall => ({
  policy,
  coordinator,
  request,
  t: request * 1000,
  mode: "speculate",
  correct: true,
  miss: false,
  event: false,
  speculativeBranches: committed,
  committed,
  pivotalCommits: 0,
  committedBits: 0,
  abandoned: 0,
  late: 0,
  pivotalCut: 0,
  decisionRelevant: false,
  wouldFlip: false,
  speculationAbandoned: false,
  overlapMs: 0,
  thrownMs: 0,
  abandonLostMs: 0,
  lateLostMs: 0,
  completionMs: 0,
  peerWorkUsedMs: 0,
  peerWorkCutMs: 0,
  peerWorkRedundantMs: 0,
  decidedAbandonCostMs: NaN,
});

describe("pairedDifference", () => {
  it("pairs the same request of the same coordinator, and drops what only one policy answered", () => {
    const a = [call("rule", "c1", 0, 1), call("rule", "c2", 0, 2), call("rule", "c1", 1, 3)];
    const b = [call("naive", "c2", 0, 10), call("naive", "c1", 0, 20), call("naive", "c1", 7, 30)];
    const pairs = pairCalls(a, b);
    expect(pairs.map(([x, y]) => [x.committed, y.committed])).toEqual([
      [1, 20],
      [2, 10],
    ]);
  });

  it("gives the mean difference with Student's t interval", () => {
    // Differences 1, 2, 3, 4, 5: mean 3, sd sqrt(2.5), t(4) 2.776 → half-width 2.776·sqrt(2.5/5).
    const a = [1, 2, 3, 4, 5].map((d, i) => call("rule", "c", i, 10 + d));
    const b = [1, 2, 3, 4, 5].map((_, i) => call("naive", "c", i, 10));
    const d = pairedDifference(pairCalls(a, b), (c) => c.committed)!;
    const half = 2.776 * Math.sqrt(2.5 / 5);
    expect(d.pairs).toBe(5);
    expect(d.mean).toBe(3);
    expect(d.lo95).toBeCloseTo(3 - half, 3);
    expect(d.hi95).toBeCloseTo(3 + half, 3);
  });

  it("is null under two pairs, and a constant difference has a zero-width interval", () => {
    expect(
      pairedDifference(pairCalls([call("a", "c", 0, 1)], [call("b", "c", 0, 2)]), (c) => c.committed),
    ).toBe(null);
    const a = [0, 1, 2].map((i) => call("a", "c", i, 5));
    const b = [0, 1, 2].map((i) => call("b", "c", i, 7));
    expect(pairedDifference(pairCalls(a, b), (c) => c.committed)).toEqual({
      pairs: 3,
      mean: -2,
      lo95: -2,
      hi95: -2,
    });
  });

  it("t quantile: the table to 30 degrees of freedom, then within 0.002 of the exact values", () => {
    expect(tQuantile975(1)).toBe(12.706);
    expect(tQuantile975(30)).toBe(2.042);
    expect(tQuantile975(40)).toBeCloseTo(2.021, 2);
    expect(tQuantile975(60)).toBeCloseTo(2.0, 2);
    expect(tQuantile975(120)).toBeCloseTo(1.98, 2);
    expect(tQuantile975(100_000)).toBeCloseTo(1.96, 2);
    expect(tQuantile975(0)).toBeNaN();
  });
});

describe("pairedRatioDifference", () => {
  it("is the difference of the two ratios on the pairs, inside its bootstrap interval, and null without a denominator", () => {
    const a = Array.from({ length: 40 }, (_, i) => call("rule", "c", i, i % 2));
    const b = Array.from({ length: 40 }, (_, i) => call("naive", "c", i, i % 4 === 0 ? 1 : 0));
    const pairs = pairCalls(a, b);
    const d = pairedRatioDifference(
      pairs,
      (c) => c.committed,
      () => 1,
    )!;
    expect(d.mean).toBeCloseTo(0.5 - 0.25, 4);
    expect(d.lo95).toBeLessThan(d.mean);
    expect(d.hi95).toBeGreaterThan(d.mean);
    expect(
      pairedRatioDifference(
        pairs,
        (c) => c.committed,
        () => 0,
      ),
    ).toBeNull();
    expect(
      pairedRatioDifference(
        pairs,
        (c) => c.committed,
        () => 1,
      ),
    ).toEqual(d); // seeded
  });
});
