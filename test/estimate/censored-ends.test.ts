import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/estimate/options.js";
import type { LatencyBookOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import {
  coarseIndexOf,
  coarseLowOf,
  endSubBits,
  MAX_END_POINTS,
  WindowedCensored,
} from "../../src/estimate/windowed-censored.js";
import { WindowedHistogram } from "../../src/estimate/windowed-histogram.js";
import { ManualClock } from "./helpers.js";

function peer(clock: ManualClock, options: Partial<LatencyBookOptions> = {}): PeerLatency {
  return new PeerLatency("p", resolveOptions({ windowMs: 10_000, minSamples: 20, ...options }), clock);
}

describe("WindowedCensored", () => {
  it("rounds a censoring time down to a bucket edge at most 6.25 % below it (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7fffffff }), (v) => {
        const i = coarseIndexOf(v);
        const low = coarseLowOf(i);
        expect(low).toBeLessThanOrEqual(v);
        expect(v - low).toBeLessThanOrEqual(Math.max(0, v / 16));
        expect(coarseIndexOf(low)).toBe(i);
        if (i > 0) expect(coarseLowOf(i - 1)).toBeLessThan(low);
      }),
      { numRuns: 2_000, seed: 11 },
    );
  });

  it("reads ascending (edge, count) pairs and evicts in step with the completed window", () => {
    const c = new WindowedCensored(6_000, 6, 60e6);
    const h = new WindowedHistogram(6_000, 6, 60e6);
    let t = 1_000_000;
    for (let i = 0; i < 12; i++) {
      c.record((i + 1) * 10_000, t); // 10, 20, ... ms
      h.record(1_000, t);
      t += 700;
      c.advance(t);
      h.advance(t);
      expect(c.totalCount).toBe(h.totalCount);
    }
    const { x: ages, w: weights, n } = c.pairs();
    expect(n).toBe(c.totalCount);
    for (let k = 1; k < n; k++) expect(ages[k]!).toBeGreaterThan(ages[k - 1]!);
    expect([...weights.subarray(0, n)].every((w) => w === 1)).toBe(true);
    t += 7_000;
    c.advance(t);
    h.advance(t);
    expect(c.totalCount).toBe(0);
    expect(h.totalCount).toBe(0);
  });

  it("holds no ends until the first censored end, then a few", () => {
    const c = new WindowedCensored(60_000, 6, 60e6);
    const empty = c.estimatedFootprintInBytes;
    c.record(5_000, 1_000);
    c.pairs();
    // a ring of 16 ends (2 bytes each) and room for 4 pairs (16 bytes each)
    expect(c.estimatedFootprintInBytes - empty).toBe(16 * 2 + 4 * 16);
  });

  it("keeps an end to less than 1/4,096 below its age at the default 60 s range (property)", () => {
    expect(endSubBits(60e6)).toBe(13);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 60_000, noNaN: true }), (ageMs) => {
        const c = new WindowedCensored(60_000, 6, 60e6);
        c.record(ageMs * 1000, 1_000);
        const { x, n } = c.pairs();
        expect(n).toBe(1);
        expect(x[0]!).toBeLessThanOrEqual(ageMs);
        expect(x[0]!).toBeGreaterThanOrEqual((Math.floor(ageMs * 1000) * (1 - 1 / 4096)) / 1000 - 1e-12);
      }),
      { numRuns: 2_000, seed: 12 },
    );
  });

  it("past the points it reads, the lowest fold into one at the smallest age; the highest stay as recorded", () => {
    const c = new WindowedCensored(60_000, 6, 60e6, 1024);
    // one end in each of 2 × MAX_END_POINTS + 6 coarse buckets, a power of 2^(1/4) apart: enough that
    // merging pairwise would reach the top
    const ages = Array.from({ length: 2 * MAX_END_POINTS + 6 }, (_, i) => 2 ** (i / 4));
    for (const ms of ages) c.record(ms * 1000, 1_000);
    const { x, w, n } = c.pairs();
    expect(n).toBe(MAX_END_POINTS);
    const folded = ages.length - MAX_END_POINTS + 1;
    expect(x[0]).toBeCloseTo(Math.floor(ages[0]! * 1000) / 1000, 2);
    expect(w[0]).toBe(folded);
    for (let j = 1; j < n; j++) {
      const age = ages[folded + j - 1]!;
      expect(x[j]).toBeLessThanOrEqual(age);
      expect(x[j]).toBeGreaterThan(age * (15 / 16));
      expect(w[j]).toBe(1);
    }
  });

  it(`reads at most ${MAX_END_POINTS} points: past them, neighbours merge at the smallest age (property)`, () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.001, max: 60_000, noNaN: true }), { minLength: 1, maxLength: 1024 }),
        (agesMs) => {
          const c = new WindowedCensored(60_000, 6, 60e6, 1024);
          for (const ms of agesMs) c.record(ms * 1000, 1_000);
          const { x, w, n } = c.pairs();
          expect(n).toBeLessThanOrEqual(MAX_END_POINTS);
          expect([...w.subarray(0, n)].reduce((a, b) => a + b, 0)).toBe(agesMs.length);
          // each point is a lower bound of the ends it holds: at most as many ends lie below it as
          // the points before it hold, and the first is at or below the smallest age
          const sorted = [...agesMs].sort((a, b) => a - b);
          let before = 0;
          for (let k = 0; k < n; k++) {
            if (k > 0) expect(x[k]!).toBeGreaterThan(x[k - 1]!);
            expect(x[k]!).toBeLessThanOrEqual(sorted[before]!);
            before += w[k]!;
          }
        },
      ),
      { numRuns: 300, seed: 13 },
    );
  });

  it("keeps the newest maxEnds, dropping the oldest, and reads each bucket at its smallest age", () => {
    const c = new WindowedCensored(60_000, 6, 60e6, 1024);
    for (let i = 0; i < 2_000; i++) c.record(5_000, 1_000);
    expect(c.totalCount).toBe(1024);
    c.record(9_000, 1_000);
    c.record(9_100, 1_000);
    expect(c.totalCount).toBe(1024);
    expect(c.dropped).toBe(2_000 - 1024 + 2);
    const { x, w, n } = c.pairs();
    expect(n).toBe(2);
    expect([...x.subarray(0, n)]).toEqual([5, 9]);
    expect([...w.subarray(0, n)]).toEqual([1022, 2]);
    c.advance(100_000);
    expect(c.totalCount).toBe(0);
  });
});

describe("PeerLatency — abandoned calls are right-censored observations", () => {
  it("abandoned() keeps 'latency > age' in the window: not a sample, and it ages out with the window", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 1 });
    for (let i = 0; i < 10; i++) p.record(10, clock.t);
    const call = p.begin(clock.t, clock.t + 1_000);
    clock.t += 50;
    call.abandoned();
    call.complete(5); // ignored: already ended
    expect(p.estimate(clock.t)).toMatchObject({ samples: 10, censored: 0, censoredEnds: 1 });
    const explicit = p.begin(clock.t);
    explicit.abandoned(70);
    expect(p.estimate(clock.t).censoredEnds).toBe(2);
    expect(p.estimate(clock.t).p99Ms).toBeGreaterThan(60); // beyond every completion: a lower bound
    clock.t += 12_000; // past the window, kept while the window holds fewer than windowMinCompletions
    expect(p.estimate(clock.t)).toMatchObject({ samples: 10, censoredEnds: 2 });
    clock.t += 20_000; // past windowMaxStretch windows
    expect(p.estimate(clock.t)).toMatchObject({ samples: 0, censoredEnds: 0 });
  });

  it("calls cut far beyond every completion keep p99 a lower bound however many low ends there are", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    for (let i = 0; i < 200; i++) {
      p.record(10, clock.t);
      clock.t += 10;
    }
    // 47 ends abandoned early, each in a coarse bucket of its own below every completion, then 10 cut at 500 ms
    for (let i = 0; i < 47; i++) p.begin(clock.t).abandoned(0.1 * 2 ** (i / 8));
    for (let i = 0; i < 10; i++) p.begin(clock.t).abandoned(500);
    const e = p.estimate(clock.t);
    expect(e).toMatchObject({ status: "fresh", censoredEnds: 57, p99Kind: "lower-bound" });
    expect(e.p99Ms).toBeGreaterThanOrEqual(500 * (15 / 16));
  });

  it("a tail that is abandoned raises p99 to at least (about) the abandon age", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    for (let i = 0; i < 200; i++) {
      p.record(8 + (i % 5), clock.t);
      clock.t += 10;
    }
    expect(p.estimate(clock.t).p99Ms).toBeLessThan(13);
    for (let i = 0; i < 6; i++) {
      const call = p.begin(clock.t);
      clock.t += 300;
      call.abandoned(); // the decision moved on after 300 ms; the peer had not answered
    }
    const e = p.estimate(clock.t);
    expect(e).toMatchObject({ status: "fresh", samples: 200, censoredEnds: 6 });
    expect(e.p99Ms).toBeGreaterThanOrEqual(300 * (15 / 16)); // rounded down to the coarse edge
    expect(e.p99Ms).toBeLessThanOrEqual(300);
    expect(e.p50Ms).toBeLessThan(13);
  });

  it("is Kaplan–Meier with weights: censored ends below, between and beyond the completions", () => {
    const clock = new ManualClock();
    const base = (): PeerLatency => {
      const p = peer(clock, { minSamples: 1 });
      for (let i = 0; i < 50; i++) p.record(10, clock.t);
      for (let i = 0; i < 50; i++) p.record(30, clock.t);
      return p;
    };
    const end = (p: PeerLatency, ageMs: number, n: number): void => {
      for (let i = 0; i < n; i++) p.begin(clock.t).abandoned(ageMs);
    };
    const below = base();
    end(below, 5, 100);
    expect(below.cdfAt(20, clock.t)).toBeCloseTo(0.5, 9);
    const between = base();
    end(between, 20, 100); // at risk for the 10 ms bucket only: S after 10 ms = 1 − 50/200
    expect(between.cdfAt(20, clock.t)).toBeCloseTo(0.25, 9);
    expect(between.cdfAt(31, clock.t)).toBe(1);
    const beyond = base();
    end(beyond, 40, 50);
    beyond.begin(clock.t - 60); // plus one call in flight for 60 ms
    end(beyond, 80, 49);
    // S = 0.75 × (1 − 50/150) = 0.5 beyond 30 ms, shared by weight: 50 at ~40, 1 at 60, 49 at ~80
    expect(beyond.cdfAt(35, clock.t)).toBeCloseTo(0.5, 9);
    expect(beyond.cdfAt(50, clock.t)).toBeCloseTo(0.75, 9);
    expect(beyond.cdfAt(61, clock.t)).toBeCloseTo(0.755, 9);
    const p99 = beyond.estimate(clock.t).p99Ms;
    expect(p99).toBeGreaterThanOrEqual(75);
    expect(p99).toBeLessThanOrEqual(80);
  });

  it("censored ends never lower a quantile below the completed samples', and p99 >= p50 (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 5_000, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.double({ min: 0, max: 9_000, noNaN: true }), { maxLength: 20 }),
        fc.array(fc.double({ min: 0, max: 9_000, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.double({ min: 0.01, max: 0.999, noNaN: true }),
        (done, flying, ended, q) => {
          const clock = new ManualClock(100_000);
          const plain = peer(clock);
          const withFlights = peer(clock);
          const withEnds = peer(clock);
          for (const ms of done) for (const p of [plain, withFlights, withEnds]) p.record(ms, clock.t);
          for (const age of flying) {
            withFlights.begin(clock.t - age);
            withEnds.begin(clock.t - age);
          }
          for (const age of ended) withEnds.begin(clock.t - age).abandoned(age);
          // never below what the completed samples alone say
          const a = plain.cdf(clock.t).quantile(q);
          const c = withEnds.cdf(clock.t).quantile(q);
          expect(c).toBeGreaterThanOrEqual(a * (1 - 1e-9));
          // and wherever the completions carry the estimate (below the slowest one), adding censored ends
          // to the calls in flight only moves mass up (Kaplan–Meier: the risk sets only grow)
          const slowest = Math.max(...done);
          for (const t of [...done, ...ended, ...flying]) {
            if (t >= slowest) continue;
            expect(withEnds.cdfAt(t, clock.t)).toBeLessThanOrEqual(withFlights.cdfAt(t, clock.t) + 1e-12);
            expect(withFlights.cdfAt(t, clock.t)).toBeLessThanOrEqual(plain.cdfAt(t, clock.t) + 1e-12);
          }
          const est = withEnds.estimate(clock.t);
          expect(est.p99Ms).toBeGreaterThanOrEqual(est.p50Ms);
        },
      ),
      { numRuns: 200, seed: 5 },
    );
  });

  it("counts censored ends among the completions at most once per completion; beyond them, fully", () => {
    const clock = new ManualClock();
    // alone (every call abandoned at 50 ms, none answered): fresh, and every quantile says it is a lower bound
    const only = peer(clock);
    for (let i = 0; i < 100; i++) only.begin(clock.t).abandoned(50);
    const alone = only.estimate(clock.t);
    expect(alone).toMatchObject({
      status: "fresh",
      samples: 0,
      censoredEnds: 100,
      p50Kind: "lower-bound",
      p99Kind: "lower-bound",
    });
    expect(alone.p50Ms).toBeCloseTo(50, 1);
    // below the completions (abandoned at 5 ms, answers at 20 ms): at most once per completion
    const few = peer(clock);
    for (let i = 0; i < 100; i++) few.begin(clock.t).abandoned(5);
    for (let i = 0; i < 9; i++) few.record(20, clock.t);
    expect(few.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "too-few-samples" }); // 9 + 9 < 20
    few.record(20, clock.t);
    // 10 + 10; the p50 is known, the p99 is not yet (fewer than 100 completions: see lower-bounds.test.ts)
    expect(few.estimate(clock.t)).toMatchObject({ status: "fresh", samples: 10, p50Kind: "known" });
    // a window of only calls in flight is still never fresh
    const flying = peer(clock);
    for (let i = 0; i < 30; i++) flying.begin(clock.t - 50);
    expect(flying.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "too-few-samples" });
  });

  it("censored ends do not make a stale estimate recent; reset forgets them", () => {
    const clock = new ManualClock();
    const p = peer(clock, { maxSampleAgeMs: 1_000 });
    for (let i = 0; i < 30; i++) p.record(10, clock.t);
    clock.t += 2_000;
    p.begin(clock.t).abandoned(5);
    expect(p.estimate(clock.t)).toMatchObject({
      status: "unknown",
      reason: "no-recent-sample",
      censoredEnds: 1,
    });
    p.reset();
    expect(p.estimate(clock.t)).toMatchObject({ reason: "peer-reset", censoredEnds: 0 });
  });
});
