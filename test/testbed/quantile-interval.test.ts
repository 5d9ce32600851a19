/** The measured p99's distribution-free interval (src/testbed/quantile-interval.ts). */
import { describe, expect, it } from "vitest";
import { quantileInterval } from "../../src/testbed/quantile-interval.js";
import { createRng } from "../../src/util/rng.js";

const ranks = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe("quantileInterval", () => {
  it("with 62 fan-outs bounds the p99 below by the third largest and not above", () => {
    // P(at most 2 of 62 beyond the p99) = 0.976 >= 0.975; P(none beyond) = 0.99^62 = 0.54 > 0.025
    expect(quantileInterval(ranks(62), 0.99)).toEqual({ level: 0.95, loMs: 60, hiMs: null });
  });

  it("has both ends once the samples can bound the p99 above, and narrows the median as n grows", () => {
    const p99 = quantileInterval(ranks(1000), 0.99);
    expect(p99.loMs).toBeLessThan(990);
    expect(p99.hiMs).toBeGreaterThan(990);
    expect(p99.hiMs).toBeLessThanOrEqual(1000);
    const small = quantileInterval(ranks(62), 0.5);
    const large = quantileInterval(ranks(1000), 0.5);
    expect((small.hiMs! - small.loMs!) / 62).toBeGreaterThan((large.hiMs! - large.loMs!) / 1000);
  });

  it("covers the true quantile at least at its level (property, over sample sizes and quantiles)", () => {
    const random = createRng(11);
    for (const [n, q] of [
      [62, 0.99],
      [40, 0.5],
      [400, 0.99],
      [200, 0.9],
    ] as const) {
      // uniform on [0, 1): the q-quantile is q
      let covered = 0;
      const trials = 2000;
      for (let t = 0; t < trials; t++) {
        const sample = Array.from({ length: n }, () => random()).sort((a, b) => a - b);
        const iv = quantileInterval(sample, q);
        if ((iv.loMs === null || iv.loMs <= q) && (iv.hiMs === null || q < iv.hiMs)) covered++;
      }
      // 2,000 trials: the share's standard error at 95% is 0.005
      expect(covered / trials).toBeGreaterThanOrEqual(0.935);
    }
  });

  it("has an upper end for the p99 from 368 samples on (0.99^n <= 2.5%)", () => {
    expect(quantileInterval(ranks(367), 0.99).hiMs).toBeNull();
    expect(quantileInterval(ranks(368), 0.99).hiMs).toBe(368);
  });

  it("gives no ends with no samples", () => {
    expect(quantileInterval([], 0.99)).toEqual({ level: 0.95, loMs: null, hiMs: null });
  });
});
