import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import type { InFlight } from "../../src/estimate/types.js";
import { ManualClock } from "./helpers.js";

/**
 * What a large quorum's estimate does to each member between two estimates: its calls in flight age (some
 * past ended points, some into the tail), now and then one ends and another begins, and the search reads
 * the CDF at a few points in no fixed order. Each read (and the span the search starts from: horizon,
 * first and last point) must be exactly what a CDF built fresh at that moment reads, whatever was read
 * before it.
 */
describe("a member's CDF refreshed between quorum estimates", () => {
  it("reads at every step exactly as one built fresh then, in any read order (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.05, max: 80, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.array(fc.double({ min: 0.05, max: 120, noNaN: true }), { maxLength: 30 }),
        fc.array(fc.double({ min: 0, max: 60, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.double({ min: 0.01, max: 4, noNaN: true }), fc.boolean()), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.array(fc.double({ min: 0.1, max: 150, noNaN: true }), { minLength: 1, maxLength: 12 }),
        (done, cut, starts, steps, reads) => {
          const clock = new ManualClock(100_000);
          const options = resolveOptions({ minSamples: 1 });
          const fill = (p: PeerLatency): void => {
            for (const ms of done) p.record(ms, clock.t);
            for (const ms of cut) p.recordCensored(ms, clock.t);
          };
          const stepped = new PeerLatency("p", options, clock);
          fill(stepped);
          let calls: InFlight[] = starts.map((s) => stepped.begin(clock.t - s, clock.t + 10_000));
          let begun = starts.map((s) => clock.t - s);
          let t = clock.t;
          for (const [dt, swap] of steps) {
            t += dt;
            if (swap && calls.length > 0) {
              // one call fails (no observation) and a new one begins: the count of calls stays
              (calls[0] as InFlight).failed();
              calls = [...calls.slice(1), stepped.begin(t, t + 10_000)];
              begun = [...begun.slice(1), t];
            }
            const a = stepped.cdf(t);
            const fresh = new PeerLatency("p", options, clock);
            fill(fresh);
            for (const b of begun) fresh.begin(b, b + 10_000);
            const b = fresh.cdf(t);
            // the span the fan-out search reads is kept by `update`, moved calls included
            expect(a.horizonMs).toBe(b.horizonMs);
            expect(a.minX).toBe(b.minX);
            expect(a.maxX).toBe(b.maxX);
            // and says what it claims, checked against the CDF itself, not only against a twin
            if (!a.empty) {
              expect(a.at(a.maxX)).toBe(1);
              expect(a.at(a.maxX * (1 - 1e-9))).toBeLessThan(1);
              expect(a.at(a.minX * (1 - 1e-9))).toBe(0);
              expect(a.at(a.minX * 1.02 + 0.01)).toBeGreaterThan(0);
            }
            for (const x of reads) expect(a.at(x)).toBe(b.at(x));
            for (const x of [...reads].reverse()) expect(a.at(x * 1.01)).toBe(b.at(x * 1.01));
            for (const q of [0.1, 0.5, 0.9, 0.99]) expect(a.quantile(q)).toBe(b.quantile(q));
          }
        },
      ),
      { numRuns: 150, seed: 23 },
    );
  });

  it("moves the calls in flight in place through a steady sequence of small agings, rebuilding only at the start", () => {
    const clock = new ManualClock(100_000);
    const p = new PeerLatency("p", resolveOptions({ minSamples: 1 }), clock);
    for (let i = 0; i < 50; i++) p.record(5 + i, clock.t);
    for (let i = 0; i < 20; i++) p.recordCensored(1 + i * 2, clock.t); // ended points young calls pass
    for (let i = 0; i < 8; i++) p.begin(clock.t - i * 0.5, clock.t + 10_000);
    const cdf = p.cdf(clock.t);
    const { rebuilds } = cdf.stats;
    for (let step = 1; step <= 100; step++) p.cdf(clock.t + step * 0.25); // 25 ms in quarter-ms steps
    expect(cdf.stats.moves).toBe(100);
    expect(cdf.stats.rebuilds).toBe(rebuilds);
  });
});
