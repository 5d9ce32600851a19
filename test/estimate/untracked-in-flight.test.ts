import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import { ManualClock } from "./helpers.js";

const QS = [0.1, 0.5, 0.9, 0.99];

function peer(clock: ManualClock, cap: number): PeerLatency {
  return new PeerLatency(
    "p",
    resolveOptions({ windowMs: 10_000, minSamples: 1, maxInFlightPerPeer: cap }),
    clock,
  );
}

/** A peer with `done` completions and calls in flight begun, in order, at the ages given (ms before now). */
function build(clock: ManualClock, cap: number, done: number[], ages: number[]): PeerLatency {
  const p = peer(clock, cap);
  for (const ms of done) p.record(ms, clock.t);
  for (const age of ages) p.begin(clock.t - age);
  return p;
}

describe("calls in flight past maxInFlightPerPeer", () => {
  it("a stall past the cap reads as a lower bound, as with every call tracked", () => {
    const clock = new ManualClock();
    const done = Array.from({ length: 40 }, (_, i) => 8 + (i % 5));
    // 64 calls out since the peer stalled 300–500 ms ago
    const ages = Array.from({ length: 64 }, (_, i) => 500 - i * 3);
    const capped = build(clock, 24, done, ages).estimate(clock.t);
    const unlimited = build(clock, 65_536, done, ages).estimate(clock.t);
    const ignored = build(clock, 24, done, ages.slice(0, 24)).estimate(clock.t);
    expect(ignored.p50Kind).toBe("known");
    expect(unlimited.p50Kind).toBe("lower-bound");
    expect(capped).toMatchObject({ p50Kind: "lower-bound", censored: 64, status: "fresh" });
    expect(capped.p50Ms).toBeGreaterThanOrEqual(300 - 1e-9);
    expect(capped.p50Ms).toBeLessThanOrEqual(unlimited.p50Ms);
  });

  it("counts each untracked call until it ends, at the youngest one's age, and forgets them past the window", () => {
    const clock = new ManualClock();
    const p = peer(clock, 2);
    const calls = [400, 300, 200, 100].map((age) => p.begin(clock.t - age));
    expect(p.untrackedInFlight).toBe(2);
    // the untracked ones (200 and 100 ms old) both read as 100 ms: the p99 is the oldest call's age
    expect(p.estimate(clock.t)).toMatchObject({ censored: 4, status: "unknown" });
    expect(p.cdfAt(99, clock.t)).toBe(0);
    expect(p.cdfAt(101, clock.t)).toBeCloseTo(0.5, 9);
    calls[3]!.failed(); // an untracked call ended: the other still counts, at the bound kept
    expect(p.untrackedInFlight).toBe(1);
    expect(p.cdfAt(101, clock.t)).toBeCloseTo(1 / 3, 9);
    calls[2]!.abandoned();
    expect(p.untrackedInFlight).toBe(0);
    calls[2]!.abandoned(); // one end per call
    expect(p.untrackedInFlight).toBe(0);
    const late = p.begin(clock.t); // a slot is still full, so a new call is untracked again
    expect(p.untrackedInFlight).toBe(1);
    clock.t += 10_001;
    expect(p.estimate(clock.t).censored).toBe(0);
    expect(p.inFlightCount).toBe(0);
    late.failed(); // ended after it was forgotten: ignored
    p.begin(clock.t);
    p.begin(clock.t);
    p.begin(clock.t);
    expect(p.untrackedInFlight).toBe(1);
    p.reset();
    expect(p.inFlightCount).toBe(0);
  });

  it("every quantile is at most the one with no cap, and a known one at least the one with them ignored", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.05, max: 2_000, noNaN: true }), { maxLength: 60 }),
        fc.array(fc.double({ min: 0, max: 9_000, noNaN: true }), { minLength: 2, maxLength: 80 }),
        fc.integer({ min: 0, max: 30 }),
        (done, ages, capSeed) => {
          const cap = capSeed % ages.length;
          const clock = new ManualClock();
          const capped = build(clock, cap, done, ages);
          const ignored = build(clock, cap, done, ages.slice(0, cap));
          const unlimited = build(clock, 65_536, done, ages);
          const c = capped.estimate(clock.t);
          const u = unlimited.estimate(clock.t);
          expect(c.censored).toBe(ages.length);
          const cc = capped.cdf(clock.t);
          const ic = ignored.cdf(clock.t);
          const uc = unlimited.cdf(clock.t);
          for (const q of QS) {
            const cq = cc.quantile(q);
            // a lower bound with them ignored stays one; a known quantile only rises (risk sets only grow)
            if (ic.lowerBound(q)) expect(cc.lowerBound(q)).toBe(true);
            else if (!ic.empty) expect(cq).toBeGreaterThanOrEqual(ic.quantile(q) * (1 - 1e-9));
            expect(cq).toBeLessThanOrEqual(uc.quantile(q) * (1 + 1e-9));
          }
          // the youngest untracked call at or beyond every completion (a stall): the p50's kind is kept
          const youngest = Math.min(...ages.slice(cap));
          if (youngest >= Math.max(0, ...done) * 1.02 && u.p50Kind === "lower-bound")
            expect(c.status === "unknown" || c.p50Kind === "lower-bound").toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
