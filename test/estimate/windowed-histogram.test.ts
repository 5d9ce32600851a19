import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bucketIndexOf, WindowedHistogram } from "../../src/estimate/windowed-histogram.js";

const W = 6_000;
const N = 6;

describe("WindowedHistogram", () => {
  it("counts a burst for at least windowMs − windowMs/slices and never past windowMs·(1 + 1/slices)", () => {
    const t0 = 10 * W + 123; // mid-slice
    const w = new WindowedHistogram(W, N, 60e6);
    for (let i = 0; i < 50; i++) w.record(500_000, t0);
    const bound = W * (1 + 1 / N);
    // still counted just before W − W/N
    w.advance(t0 + W - W / N - 1);
    expect(w.totalCount).toBe(50);
    // gone by the bound (and in fact by W)
    w.advance(t0 + bound);
    expect(w.totalCount).toBe(0);
    expect(w.valueAtPercentile(99, t0 + bound)).toBe(0);
  });

  it("slow samples stop raising p99 once they age out, while fresh fast ones keep counting", () => {
    const w = new WindowedHistogram(W, N, 60e6);
    let t = 0;
    for (let i = 0; i < 100; i++) w.record(300_000, t); // 300 ms burst at t = 0
    for (; t <= 2 * W; t += 10) w.record(10_000, t); // 10 ms steady traffic
    const p99 = w.valueAtPercentile(99, t);
    expect(p99).toBeLessThan(10_200);
    expect(p99).toBeGreaterThanOrEqual(9_900);
  });

  it("evicts exactly the slice it rotates out (running sum stays equal to the sum of the live slices)", () => {
    const w = new WindowedHistogram(W, N, 60e6);
    const slice = W / N;
    for (let s = 0; s < 3 * N; s++) {
      for (let i = 0; i <= s; i++) w.record(1000 * (s + 1), s * slice + 1);
      // live slices: the current one and the N − 1 before it
      let expected = 0;
      for (let k = Math.max(0, s - N + 1); k <= s; k++) expected += k + 1;
      expect(w.totalCount).toBe(expected);
    }
  });

  it("a gap longer than the window clears everything; a clock going backwards changes nothing", () => {
    const w = new WindowedHistogram(W, N, 60e6);
    w.record(1000, 5_000);
    w.record(2000, 4_000); // backwards: goes into the current slice
    expect(w.totalCount).toBe(2);
    w.advance(5_000 + 10 * W);
    expect(w.totalCount).toBe(0);
  });

  it("clamps values into [1 µs, highest] and counts them in their bucket", () => {
    const w = new WindowedHistogram(W, N, 60e6);
    w.record(0, 0);
    w.record(-5, 0);
    w.record(1e12, 0);
    w.record(12_345, 0);
    const { lo, hi } = w.range();
    const table = w.table;
    expect(w.totalCount).toBe(4);
    expect(table.lowUs[lo]).toBe(1);
    expect(w.countAt(lo)).toBe(2);
    expect(w.countAt(hi)).toBe(1);
    expect(table.lowUs[hi]! + table.widthUs[hi]!).toBeGreaterThan(60e6 * 0.98);
    const i = bucketIndexOf(12_345);
    expect(w.countAt(i)).toBe(1);
    expect(w.countAtOrBelow(i)).toBe(3);
  });

  it("its buckets tile the range, each at most 1/64 of its low edge above 64 µs (property)", () => {
    const table = new WindowedHistogram(W, 1, 60e6).table;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7fffffff }), (v) => {
        const i = bucketIndexOf(v);
        const low = table.lowUs[i]!;
        const width = table.widthUs[i]!;
        expect(low).toBeLessThanOrEqual(v);
        expect(v).toBeLessThan(low + width);
        if (v >= 64) expect(width / low).toBeLessThanOrEqual(1 / 64);
        if (i > 0) expect(table.lowUs[i - 1]! + table.widthUs[i - 1]!).toBe(low);
      }),
      { numRuns: 5_000, seed: 5 },
    );
  });

  it("keeps the newest maxSamples, dropping the oldest first, and reports ≈ 5 KB at 1,000 samples", () => {
    const w = new WindowedHistogram(W, N, 60e6, 1024);
    for (let i = 1; i <= 1000; i++) w.record(i * 100, 1);
    expect(w.valueAtPercentile(50, 1)).toBeCloseTo(50_000, -3);
    expect(w.estimatedFootprintInBytes).toBeLessThan(6 * 1024);
    for (let i = 0; i < 1024; i++) w.record(7_000, 2); // the 1,000 older samples all go
    expect(w.totalCount).toBe(1024);
    expect(w.dropped).toBe(1000);
    expect(w.range()).toEqual({ lo: bucketIndexOf(7_000), hi: bucketIndexOf(7_000) });
    w.advance(2 + W);
    expect(w.totalCount).toBe(0);
  });
});
