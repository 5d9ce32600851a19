import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/estimate/options.js";
import type { LatencyBookOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import { ManualClock } from "./helpers.js";

function peer(clock: ManualClock, options: Partial<LatencyBookOptions> = {}): PeerLatency {
  return new PeerLatency("p", resolveOptions({ windowMs: 10_000, minSamples: 20, ...options }), clock);
}

describe("PeerLatency freshness", () => {
  it("is unknown and says why: never sampled, too few samples, fresh, then no recent sample", () => {
    const clock = new ManualClock();
    const p = peer(clock, { maxSampleAgeMs: 2_000 });
    const e0 = p.estimate(clock.t);
    expect(e0).toMatchObject({ status: "unknown", reason: "never-sampled", samples: 0, ageMs: Infinity });
    expect(e0.p50Ms).toBeNaN();
    for (let i = 0; i < 19; i++) p.record(10, clock.t);
    expect(p.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "too-few-samples", samples: 19 });
    p.record(10, clock.t);
    const fresh = p.estimate(clock.t);
    expect(fresh.status).toBe("fresh");
    expect(fresh.reason).toBeUndefined();
    expect(fresh.p50Ms).toBeCloseTo(10, 0);
    clock.t += 2_001;
    expect(p.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "no-recent-sample", samples: 20 });
    clock.t += 30_000; // the window emptied too (windowMaxStretch windows later)
    expect(p.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "no-recent-sample", samples: 0 });
  });

  it("after reset says peer-reset until it has enough samples again, and ignores calls begun before", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    for (let i = 0; i < 30; i++) p.record(10, clock.t);
    const old = p.begin(clock.t, clock.t + 1_000);
    p.reset();
    expect(p.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "peer-reset", samples: 0 });
    expect(p.estimate(clock.t).p99Ms).toBeNaN();
    clock.t += 500;
    old.complete(); // from the old incarnation: not a sample of the new one
    expect(p.estimate(clock.t).samples).toBe(0);
    for (let i = 0; i < 19; i++) p.record(20, clock.t);
    expect(p.estimate(clock.t).reason).toBe("peer-reset");
    p.record(20, clock.t);
    expect(p.estimate(clock.t).status).toBe("fresh");
    clock.t += 60_000;
    expect(p.estimate(clock.t).reason).toBe("no-recent-sample");
  });

  it("in-flight calls count toward minSamples, but a window of only in-flight calls is never fresh", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    // more than minSamples (20), fewer than the 24 tracked in flight by default
    for (let i = 0; i < 22; i++) p.begin(clock.t);
    clock.t += 5;
    expect(p.estimate(clock.t)).toMatchObject({ status: "unknown", reason: "too-few-samples", censored: 22 });
    for (let i = 0; i < 5; i++) p.record(3, clock.t);
    expect(p.estimate(clock.t)).toMatchObject({ status: "fresh", samples: 5, censored: 22 });
  });
});

describe("PeerLatency call ends", () => {
  it("timedOut keeps 'latency > deadline − start' (censored, never a sample), failed records nothing, and only the first end counts", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 1 });
    const t0 = clock.t;
    const slow = p.begin(t0, t0 + 250);
    const fast = p.begin(t0, t0 + 250);
    clock.t += 3;
    fast.failed();
    fast.complete(1); // ignored: already ended
    expect(p.estimate(clock.t)).toMatchObject({ samples: 0, censored: 1 });
    clock.t = t0 + 260; // the timer fired a little late
    slow.timedOut();
    slow.complete(5); // ignored
    const e = p.estimate(clock.t);
    expect(e).toMatchObject({ samples: 0, censored: 0, censoredEnds: 1, status: "fresh" });
    expect(e).toMatchObject({ p50Kind: "lower-bound", p99Kind: "lower-bound" });
    expect(e.p50Ms).toBeGreaterThanOrEqual(249.9);
    expect(e.p50Ms).toBeLessThanOrEqual(250);
    expect(e.horizonMs).toBe(e.p50Ms);
  });

  it("complete() without a latency measures now − start on the clock", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 1 });
    const call = p.begin(clock.t);
    clock.t += 40;
    call.complete();
    expect(p.estimate(clock.t).p50Ms).toBeCloseTo(40, 0);
  });

  it("bounds in-flight tracking; untracked calls stay censored while out and record when they complete", () => {
    const clock = new ManualClock();
    const p = peer(clock, { maxInFlightPerPeer: 4, minSamples: 1 });
    const calls = Array.from({ length: 10 }, () => p.begin(clock.t));
    clock.t += 1;
    expect(p.estimate(clock.t).censored).toBe(10);
    expect(p.untrackedInFlight).toBe(6);
    expect(p.inFlightCount).toBe(10);
    clock.t += 1;
    for (const c of calls) c.complete(7);
    expect(p.estimate(clock.t)).toMatchObject({ samples: 10, censored: 0 });
    expect(p.inFlightCount).toBe(0);
  });

  it("stops censoring calls older than the window", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    p.begin(clock.t);
    clock.t += 9_999;
    expect(p.estimate(clock.t).censored).toBe(1);
    clock.t += 2;
    expect(p.estimate(clock.t).censored).toBe(0);
  });
});

describe("PeerLatency censoring", () => {
  it("a tail in progress raises p99 before any slow call completes", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    for (let i = 0; i < 200; i++) {
      p.record(8 + (i % 5), clock.t); // 8–12 ms
      clock.t += 10;
    }
    const before = p.estimate(clock.t);
    expect(before.status).toBe("fresh");
    expect(before.p99Ms).toBeLessThan(13);
    // the peer stalls: 6 calls issued, none answer
    for (let i = 0; i < 6; i++) p.begin(clock.t);
    clock.t += 300;
    const during = p.estimate(clock.t);
    expect(during.samples).toBe(200); // no slow call has completed
    expect(during.censored).toBe(6);
    expect(during.status).toBe("fresh");
    expect(during.p99Ms).toBeGreaterThanOrEqual(297); // at least the age of the pending calls (HDR 1 %)
    expect(during.p50Ms).toBeLessThan(13); // the median is not a tail statistic
    // and it keeps rising while they stay pending
    clock.t += 200;
    expect(p.estimate(clock.t).p99Ms).toBeGreaterThanOrEqual(495);
  });

  it("young calls in flight do not lower any quantile (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 5_000, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.double({ min: 0, max: 9_000, noNaN: true }), { maxLength: 30 }),
        fc.double({ min: 0.01, max: 0.999, noNaN: true }),
        (done, ages, q) => {
          const clock = new ManualClock(100_000);
          const plain = peer(clock);
          const censored = peer(clock);
          for (const ms of done) {
            plain.record(ms, clock.t);
            censored.record(ms, clock.t);
          }
          for (const age of ages) censored.begin(clock.t - age);
          const a = plain.cdf(clock.t).quantile(q);
          const b = censored.cdf(clock.t).quantile(q);
          expect(b).toBeGreaterThanOrEqual(a * (1 - 1e-9));
          const est = censored.estimate(clock.t);
          expect(est.p99Ms).toBeGreaterThanOrEqual(est.p50Ms);
        },
      ),
      { numRuns: 200, seed: 2 },
    );
  });

  it("p99 >= p50 for any samples (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 70_000, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (xs) => {
          const clock = new ManualClock();
          const p = peer(clock, { minSamples: 1 });
          for (const x of xs) p.record(x, clock.t);
          const e = p.estimate(clock.t);
          expect(e.p99Ms).toBeGreaterThanOrEqual(e.p50Ms);
          expect(e.p99Ms).toBeLessThanOrEqual(60_000 * 1.01);
        },
      ),
      { numRuns: 200, seed: 3 },
    );
  });

  it("is Kaplan–Meier: young calls change nothing, calls beyond every completion hold their share as a lower bound", () => {
    const clock = new ManualClock();
    // 100 calls in flight each, all tracked (the default tracks 24 a peer)
    const options = { minSamples: 1, maxInFlightPerPeer: 100 };
    const p = peer(clock, options);
    for (let i = 0; i < 50; i++) p.record(10, clock.t);
    for (let i = 0; i < 50; i++) p.record(30, clock.t);
    const plain50 = p.cdfAt(20, clock.t);
    expect(plain50).toBeCloseTo(0.5, 9);
    for (let i = 0; i < 100; i++) p.begin(clock.t - 5); // 5 ms old: below every completion
    expect(p.cdfAt(20, clock.t)).toBeCloseTo(0.5, 9);
    // 100 calls pending for 20 ms: at risk for the 10 ms bucket, gone before the 30 ms one
    const q = peer(clock, options);
    for (let i = 0; i < 50; i++) q.record(10, clock.t);
    for (let i = 0; i < 50; i++) q.record(30, clock.t);
    for (let i = 0; i < 100; i++) q.begin(clock.t - 20);
    // S after 10 ms = 1 − 50/200 = 0.75; the 30 ms bucket takes all that remains
    expect(q.cdfAt(20, clock.t)).toBeCloseTo(0.25, 9);
    expect(q.cdfAt(31, clock.t)).toBe(1);
    // 100 calls pending for 40 ms, beyond every completion: S = 1 − 50/200 then × (1 − 50/150) = 0.5 at >= 40 ms
    const r = peer(clock, options);
    for (let i = 0; i < 50; i++) r.record(10, clock.t);
    for (let i = 0; i < 50; i++) r.record(30, clock.t);
    for (let i = 0; i < 100; i++) r.begin(clock.t - 40);
    expect(r.cdfAt(20, clock.t)).toBeCloseTo(0.25, 9);
    expect(r.cdfAt(35, clock.t)).toBeCloseTo(0.5, 9);
    expect(r.estimate(clock.t).p99Ms).toBeCloseTo(40, 6);
    expect(r.cdfAt(40, clock.t)).toBe(1);
  });

  it("cdf() is P(latency <= t)", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 1 });
    for (let i = 1; i <= 100; i++) p.record(i, clock.t);
    expect(p.cdfAt(0.5, clock.t)).toBe(0);
    expect(p.cdfAt(50.5, clock.t)).toBeCloseTo(0.5, 1);
    expect(p.cdfAt(1_000, clock.t)).toBe(1);
  });
});

describe("PeerLatency CDF between estimates", () => {
  it("is the same when rebuilt at every step as aging calls move it as when built once at the end (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.05, max: 200, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.double({ min: 0.05, max: 300, noNaN: true }), { maxLength: 20 }),
        fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.double({ min: 0.01, max: 5, noNaN: true }), { minLength: 1, maxLength: 30 }),
        (done, cut, starts, steps) => {
          const clock = new ManualClock(100_000);
          const make = (): PeerLatency => {
            const p = peer(clock, { minSamples: 1 });
            for (const ms of done) p.record(ms, clock.t);
            for (const ms of cut) p.recordCensored(ms, clock.t);
            for (const s of starts) p.begin(clock.t - s, clock.t + 10_000);
            return p;
          };
          const stepped = make();
          const once = make();
          let t = clock.t;
          for (const dt of steps) stepped.cdf((t += dt));
          const a = stepped.cdf(t);
          const b = once.cdf(t);
          expect(a.horizonMs).toBe(b.horizonMs);
          for (const q of [0.1, 0.5, 0.9, 0.99]) expect(a.quantile(q)).toBe(b.quantile(q));
          for (const x of [0.1, 1, 5, 20, 60, 150, 250, 400]) expect(a.at(x)).toBe(b.at(x));
        },
      ),
      { numRuns: 200, seed: 31 },
    );
  });
});
