import { describe, expect, it } from "vitest";
import { mixedWorkload } from "../../src/sim/mixed-workload.js";
import { withParams } from "../../src/sim/params.js";
import { separationGap } from "../../src/sim/separation.js";
import { runMixed, scanLoads } from "../../src/sim/sweep.js";
import { isStable, quantile, slope } from "../../src/sim/metrics.js";

// A CI-sized variant: half the paper's horizon, one seed, a coarse load grid.
const quick = { horizon: 300 };
const loads = [0.2, 0.4, 0.6, 0.8];

describe("slotted simulator, mixed workload (quick)", () => {
  it("is deterministic for a seed", () => {
    expect(runMixed("MABP", { ...quick, load: 0.6, seed: 3 })).toEqual(
      runMixed("MABP", { ...quick, load: 0.6, seed: 3 }),
    );
  });

  it("orders stable load MABP > BP >= JSQ", () => {
    const stable = (p: "MABP" | "BP" | "JSQ"): number => scanLoads(p, loads, [1], quick).stableLoads[0]!;
    const mabp = stable("MABP");
    const bp = stable("BP");
    const jsq = stable("JSQ");
    expect(mabp).toBeGreaterThan(bp);
    expect(bp).toBeGreaterThanOrEqual(jsq);
  });

  it("at ρ0 MABP reuses more memory, pays less penalty and churns less than BP", () => {
    const mabp = runMixed("MABP", { ...quick, seed: 1 });
    const bp = runMixed("BP", { ...quick, seed: 1 });
    expect(mabp.hitRatio).toBeGreaterThan(bp.hitRatio);
    expect(mabp.penalty).toBeLessThan(bp.penalty);
    expect(mabp.churn).toBeLessThan(bp.churn);
    // successor-law shaping: fewer verifier jobs per request
    expect(mabp.downstreamPerRequest).toBeLessThan(bp.downstreamPerRequest);
  });

  it("normalises load to the memory-assisted reference", () => {
    const w = mixedWorkload(withParams({ load: 1 }));
    const capacity = w.nodes.reduce((a, n) => a + n.capacity, 0);
    expect(w.arrivalRate * w.referenceWork).toBeCloseTo(capacity);
    expect(w.noMemoryWork).toBeGreaterThan(w.referenceWork);
  });
});

describe("Proposition 3 on the paired separation instance", () => {
  it("the BP-minus-MABP gap is ≈0 at K=1, increases with K and stays within (K−1)/2", () => {
    const o = { nu: 5, load: 0.85, horizon: 300, warmupFraction: 0.2 };
    const gaps = [1, 4, 8, 16].map((K) => separationGap({ ...o, K }, [1, 2]));
    expect(gaps[0]).toBeCloseTo(0, 9);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!);
    [1, 4, 8, 16].forEach((K, i) => expect(gaps[i]!).toBeLessThanOrEqual((K - 1) / 2 + 1e-9));
  });
});

describe("metrics", () => {
  it("slope, quantile and the paper's stability test", () => {
    expect(slope([1, 2, 3, 4])).toBeCloseTo(1);
    expect(slope([5, 5, 5])).toBe(0);
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(isStable(0.03, 119)).toBe(true);
    expect(isStable(0.04, 10)).toBe(false);
    expect(isStable(0, 121)).toBe(false);
  });
});
