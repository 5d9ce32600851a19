import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fanoutQuantiles } from "../../src/estimate/fanout.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { resolveOptions } from "../../src/estimate/options.js";
import type { LatencyBookOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import type { Requirement } from "../../src/estimate/types.js";
import { ManualClock } from "./helpers.js";

function peer(clock: ManualClock, options: Partial<LatencyBookOptions> = {}): PeerLatency {
  return new PeerLatency("p", resolveOptions({ windowMs: 10_000, minSamples: 1, ...options }), clock);
}

/** HDR buckets are 1 % (and at least 1 µs) wide: the end of a completion's bucket, at most. */
const bucketEnd = (ms: number): number => ms * 1.0101 + 0.001;

/**
 * One peer's window: `done` completed latencies and `cut` calls that ended without an answer after the
 * ages given (each cut at its deadline or abandoned), and `truth`, one latency each cut call could really
 * have had (at least its age).
 */
const arbPeer = fc
  .record({
    done: fc.array(fc.double({ min: 0.05, max: 500, noNaN: true }), { minLength: 1, maxLength: 40 }),
    cut: fc.array(
      fc.record({
        beyond: fc.double({ min: 1.05, max: 4, noNaN: true }), // age as a multiple of the slowest completion
        extra: fc.double({ min: 1, max: 50, noNaN: true }), // the truth as a multiple of the age
        deadline: fc.boolean(),
      }),
      { maxLength: 40 },
    ),
  })
  .map(({ done, cut }) => {
    const slowest = Math.max(...done);
    return {
      done,
      cut: cut.map((c) => ({
        ageMs: slowest * c.beyond,
        deadline: c.deadline,
        truthMs: slowest * c.beyond * c.extra,
      })),
    };
  });

type ArbPeer = { done: number[]; cut: { ageMs: number; deadline: boolean; truthMs: number }[] };

/** The peer as the coordinator saw it (cut calls censored), and as it really was (cut calls completed). */
function seen(clock: ManualClock, p: ArbPeer, id = "p"): { censored: PeerLatency; truth: PeerLatency } {
  const options = resolveOptions({ windowMs: 10_000, minSamples: 1 });
  const censored = new PeerLatency(id, options, clock);
  const truth = new PeerLatency(id, options, clock);
  for (const ms of p.done) {
    censored.record(ms, clock.t);
    truth.record(ms, clock.t);
  }
  for (const c of p.cut) {
    const call = censored.begin(clock.t - c.ageMs, clock.t);
    if (c.deadline) call.timedOut();
    else call.abandoned(c.ageMs);
    truth.record(c.truthMs, clock.t);
  }
  return { censored, truth };
}

describe("censored observations are lower bounds, and the estimate says which quantiles rest on them", () => {
  it("a censored observation — timed out, abandoned or in flight — never lowers a quantile (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 5_000, noNaN: true }), { minLength: 1, maxLength: 60 }),
        fc.array(
          fc.record({
            ageMs: fc.double({ min: 0, max: 9_000, noNaN: true }),
            how: fc.integer({ min: 0, max: 2 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.double({ min: 0.01, max: 0.999, noNaN: true }),
        (done, cut, q) => {
          const clock = new ManualClock(100_000);
          const plain = peer(clock);
          const censored = peer(clock);
          for (const ms of done) {
            plain.record(ms, clock.t);
            censored.record(ms, clock.t);
          }
          for (const { ageMs, how } of cut) {
            const call = censored.begin(clock.t - ageMs, clock.t);
            if (how === 0) call.timedOut();
            else if (how === 1) call.abandoned(ageMs);
            // how 2: still in flight at its age
          }
          expect(censored.cdf(clock.t).quantile(q)).toBeGreaterThanOrEqual(
            plain.cdf(clock.t).quantile(q) * (1 - 1e-9),
          );
        },
      ),
      { numRuns: 300, seed: 21 },
    );
  });

  it("a quantile past the last completion is a lower bound; one below it is known (property)", () => {
    fc.assert(
      fc.property(arbPeer, fc.double({ min: 0.01, max: 0.999, noNaN: true }), (p, q) => {
        const clock = new ManualClock(100_000);
        const { censored } = seen(clock, p);
        const cdf = censored.cdf(clock.t);
        const value = cdf.quantile(q);
        const slowest = Math.max(...p.done);
        // too few completions to know it (fewer than 1 / (1 - q)): a lower bound wherever it falls
        const tooFew = p.done.length * (1 - q) < 1 - 1e-9;
        if (tooFew) expect(cdf.lowerBound(q)).toBe(true);
        if (value > bucketEnd(slowest)) expect(cdf.lowerBound(q)).toBe(true);
        if (value < slowest && !tooFew) expect(cdf.lowerBound(q)).toBe(false);
        // the horizon is where the tail starts: the smallest censoring time beyond the completions
        if (p.cut.length === 0) expect(cdf.horizonMs).toBe(Infinity);
        else {
          const first = Math.min(...p.cut.map((c) => c.ageMs));
          expect(cdf.horizonMs).toBeLessThanOrEqual(first);
          expect(cdf.horizonMs).toBeGreaterThanOrEqual(first * (1 - 3e-4) - 0.001); // 1 µs, 1/256 of a 6 % bucket
        }
        if (cdf.lowerBound(q) && !tooFew) expect(value).toBeGreaterThanOrEqual(cdf.horizonMs);
      }),
      { numRuns: 300, seed: 22 },
    );
  });

  it("a known quantile is what any truth consistent with the censoring gives; a lower bound is at most it (property)", () => {
    fc.assert(
      fc.property(arbPeer, fc.double({ min: 0.01, max: 0.999, noNaN: true }), (p, q) => {
        const clock = new ManualClock(100_000);
        const { censored, truth } = seen(clock, p);
        const c = censored.cdf(clock.t);
        const value = c.quantile(q);
        const kind = c.lowerBound(q);
        const real = truth.cdf(clock.t).quantile(q);
        if (kind)
          expect(value).toBeLessThanOrEqual(bucketEnd(real)); // a truth at its age shares its bucket
        else expect(value).toBeCloseTo(real, 9);
      }),
      { numRuns: 300, seed: 23 },
    );
  });

  it("the estimate reports both kinds and the horizon: a peer that only times out reads p50 >= its deadline", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 20 });
    for (let i = 0; i < 20; i++) {
      const call = p.begin(clock.t, clock.t + 90);
      clock.t += 91;
      call.timedOut();
    }
    const e = p.estimate(clock.t);
    expect(e).toMatchObject({ status: "fresh", samples: 0, censoredEnds: 20 });
    expect(e).toMatchObject({ p50Kind: "lower-bound", p99Kind: "lower-bound", horizonMs: e.p50Ms });
    expect(e.p50Ms).toBeGreaterThan(89.97); // exact to 1/256 of the coarse bucket
    expect(e.p50Ms).toBeLessThanOrEqual(90);
    // with completions below the deadline for 60 % of calls, the p50 is known and the p99 is not
    for (let i = 0; i < 30; i++) p.record(20, clock.t);
    const mixed = p.estimate(clock.t);
    expect(mixed).toMatchObject({ p50Kind: "known", p99Kind: "lower-bound" });
    expect(mixed.p50Ms).toBeLessThan(21);
    expect(mixed.p99Ms).toBeGreaterThan(89.97);
  });

  it("a timeout beyond every completion keeps the estimate recent: the peer is slow now", () => {
    const clock = new ManualClock();
    const p = peer(clock, { minSamples: 20, maxSampleAgeMs: 1_000 });
    for (let i = 0; i < 30; i++) p.record(10, clock.t);
    clock.t += 2_000;
    expect(p.estimate(clock.t).reason).toBe("no-recent-sample");
    const call = p.begin(clock.t - 90, clock.t);
    call.timedOut();
    const e = p.estimate(clock.t);
    expect(e).toMatchObject({ status: "fresh", ageMs: 0, p50Kind: "known", p99Kind: "lower-bound" });
  });
});

describe("fan-out quantiles: a lower bound at or beyond the smallest member horizon", () => {
  const requirements = (n: number): Requirement[] => [
    { kind: "all" },
    { kind: "quorum", k: 1 },
    { kind: "quorum", k: Math.max(1, Math.ceil(n / 2)) },
    { kind: "quorum", k: Math.max(1, n - 1) },
  ];

  it("known fan-out quantiles are the truth's, lower bounds at most the truth's, for all of n and k of n (property)", () => {
    fc.assert(
      fc.property(fc.array(arbPeer, { minLength: 1, maxLength: 6 }), (peers) => {
        const clock = new ManualClock(100_000);
        const views = peers.map((p, i) => seen(clock, p, `p${i}`));
        const censored = views.map((v) => v.censored.cdf(clock.t));
        const horizon = Math.min(...censored.map((c) => c.horizonMs));
        for (const requirement of requirements(peers.length)) {
          const est = fanoutQuantiles(censored, requirement);
          // the CDFs are reused per peer: take the truth's only after reading the censored ones
          const truth = fanoutQuantiles(
            views.map((v) => v.truth.cdf(clock.t)),
            requirement,
          );
          expect(est.horizonMs).toBe(horizon);
          for (const [value, kind, real] of [
            [est.p50Ms, est.p50Kind, truth.p50Ms],
            [est.p99Ms, est.p99Kind, truth.p99Ms],
          ] as const) {
            // fewer than one completion expected beyond it in all the members' windows: not known yet
            const beyond = peers.reduce((sum, p, i) => sum + p.done.length * (1 - censored[i]!.at(value)), 0);
            const tooFew = value < horizon && beyond < 0.995;
            expect(kind).toBe(value >= horizon || tooFew ? "lower-bound" : "known");
            if (value >= horizon) expect(value).toBeLessThanOrEqual(bucketEnd(real) * (1 + 3e-4));
            else expect(Math.abs(value - real)).toBeLessThanOrEqual(real * 3e-4);
          }
        }
      }),
      { numRuns: 150, seed: 24 },
    );
  });

  it("calls cut at one deadline put the fan-out's lower bound at the deadline, not just below it", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ minSamples: 5, observedFanoutSets: 0 }, clock);
    const ids = ["a", "b", "c"];
    for (let i = 0; i < 10; i++) {
      const calls = ids.map((id) => book.begin(id, clock.t, clock.t + 6.5));
      clock.t += 7;
      for (const c of calls) c.timedOut();
    }
    for (const requirement of [{ kind: "all" }, { kind: "quorum", k: 2 }] as Requirement[]) {
      const f = book.fanout(ids, requirement, clock.t);
      expect(f).toMatchObject({ status: "fresh", p50Kind: "lower-bound", p99Kind: "lower-bound" });
      expect(f.p50Ms).toBe(f.horizonMs);
      expect(f.p50Ms).toBeGreaterThan(6.49);
      expect(f.p50Ms).toBeLessThanOrEqual(6.5);
    }
  });
});

describe("observed fan-outs: censored at their deadline like a call", () => {
  const ids = ["a", "b"];
  const ALL: Requirement = { kind: "all" };

  it("a set that always runs into its deadline reads p50 and p99 as lower bounds at the deadline", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ minSamples: 5, observedMinSamples: 5 }, clock);
    for (let i = 0; i < 10; i++) {
      const start = clock.t;
      const fanout = book.beginFanout(ids, ALL, start, start + 90);
      const calls = ids.map((id) => book.begin(id, start, start + 90));
      clock.t = start + 20;
      calls[0]?.complete(20);
      fanout?.answered(clock.t);
      clock.t = start + 91;
      calls[1]?.timedOut();
      fanout?.ended("deadline", 90);
    }
    const f = book.fanout(ids, ALL, clock.t);
    expect(f).toMatchObject({
      status: "fresh",
      basis: "observed",
      p50Kind: "lower-bound",
      p99Kind: "lower-bound",
    });
    expect(f.p50Ms).toBeGreaterThan(89.97);
    expect(f.p50Ms).toBeLessThanOrEqual(90);
    expect(f.horizonMs).toBeLessThanOrEqual(f.p50Ms);
  });

  it("the p99 takes the kind of the larger of the observed and the independent p99", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ minSamples: 5, observedMinSamples: 5 }, clock);
    // per peer: answers in 10 or 200 ms (known); the set's fan-outs: some censored at 60 ms by abandons
    // (200 answers each: enough for a known p99, see "too few completions")
    for (const id of ids) for (let i = 0; i < 200; i++) book.record(id, i % 10 === 0 ? 200 : 10, clock.t);
    for (let i = 0; i < 10; i++) {
      const fanout = book.beginFanout(ids, ALL, clock.t, clock.t + 1_000);
      if (i % 5 < 2) {
        fanout?.answered(clock.t + 10);
        fanout?.answered(clock.t + 12);
      } else {
        fanout?.answered(clock.t + 10);
        fanout?.ended("abandoned", 60);
      }
    }
    const f = book.fanout(ids, ALL, clock.t);
    expect(f.basis).toBe("observed");
    expect(f.p50Kind).toBe("lower-bound"); // 6 of the set's 10 fan-outs only say "> 60 ms"
    expect(f.p99Kind).toBe("known"); // the product's 200 ms, above the observed lower bound of 60 ms
    expect(f.p99Ms).toBeGreaterThan(150);
  });
});

describe("too few completions, and probe completions beyond the horizon", () => {
  it("a quantile is a lower bound while the window holds fewer than 1 / (1 - q) completions (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.05, max: 500, noNaN: true }), { minLength: 1, maxLength: 250 }),
        fc.double({ min: 0.01, max: 0.999, noNaN: true }),
        (done, q) => {
          const clock = new ManualClock(100_000);
          const p = peer(clock);
          for (const ms of done) p.record(ms, clock.t);
          // no censoring at all: only the count decides
          expect(p.cdf(clock.t).lowerBound(q)).toBe(done.length < 1 / (1 - q) - 1e-6);
        },
      ),
      { numRuns: 300, seed: 25 },
    );
    // the p99: 99 quiet completions are not a known tail, 100 are; counted over the window, not a slice
    const clock = new ManualClock();
    const p = peer(clock, { slices: 5 });
    for (let i = 0; i < 99; i++) {
      p.record(10 + (i % 7), clock.t);
      clock.t += 20; // across every slice of the window
    }
    expect(p.estimate(clock.t)).toMatchObject({ p50Kind: "known", p99Kind: "lower-bound" });
    p.record(12, clock.t);
    expect(p.estimate(clock.t)).toMatchObject({ p50Kind: "known", p99Kind: "known" });
  });

  it("a fan-out of a few dozen quiet observations has no known p99, on either basis", () => {
    const clock = new ManualClock();
    const book = new LatencyBook({ minSamples: 5, observedMinSamples: 5 }, clock);
    const ids = ["a", "b", "c"];
    for (let i = 0; i < 40; i++) {
      const fanout = book.beginFanout(ids, { kind: "all" }, clock.t, clock.t + 90);
      const calls = ids.map((id) => book.begin(id, clock.t, clock.t + 90));
      clock.t += 12;
      for (const c of calls) c.complete(12);
      for (let j = 0; j < ids.length; j++) fanout?.answered(clock.t);
    }
    const f = book.fanout(ids, { kind: "all" }, clock.t);
    expect(f).toMatchObject({ status: "fresh", basis: "observed", p50Kind: "known", p99Kind: "lower-bound" });
    const independent = new LatencyBook({ minSamples: 5, observedFanoutSets: 0 }, clock);
    for (const id of ids) for (let i = 0; i < 40; i++) independent.record(id, 12, clock.t);
    expect(independent.fanout(ids, { kind: "all" }, clock.t)).toMatchObject({
      basis: "independent",
      p50Kind: "known",
      p99Kind: "lower-bound",
    });
  });

  it("probe completions beyond the horizon take the censored mass: the p99 reads the tail, not the deadline", () => {
    const clock = new ManualClock();
    const p = peer(clock);
    for (let i = 0; i < 200; i++) p.record(10, clock.t);
    // 20 calls cut at a 70 ms deadline: the p99 is a lower bound at the horizon
    for (let i = 0; i < 20; i++) p.begin(clock.t - 70, clock.t).timedOut();
    const cut = p.estimate(clock.t);
    expect(cut).toMatchObject({ p99Kind: "lower-bound" });
    expect(cut.p99Ms).toBeLessThanOrEqual(70);
    // five probes that ran on answer at 300 ms: Kaplan–Meier hands the mass censored at 70 ms to them
    for (let i = 0; i < 5; i++) p.record(300, clock.t);
    const probed = p.estimate(clock.t);
    expect(probed).toMatchObject({ p99Kind: "known", horizonMs: Infinity });
    expect(probed.p99Ms).toBeGreaterThan(290);
    expect(probed.p99Ms).toBeLessThanOrEqual(bucketEnd(300));
  });
});
