import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { ObservedFanout, ObservedFanouts, observedSetKey } from "../../src/estimate/observed-fanouts.js";
import { resolveOptions } from "../../src/estimate/options.js";
import type { InFlight, PeerId } from "../../src/estimate/types.js";
import { ManualClock } from "./helpers.js";

const ALL = { kind: "all" } as const;

/** One fan-out to `peers` whose branches all answer after `ms` (the peers queue together). */
function correlatedFanout(book: LatencyBook, clock: ManualClock, peers: readonly PeerId[], ms: number): void {
  const start = clock.t;
  const observed = book.beginFanout(peers, ALL, start, start + 10_000);
  const calls = peers.map((p) => book.begin(p, start, start + 10_000));
  clock.t = start + ms;
  for (const c of calls) {
    c.complete(ms);
    observed?.answered(clock.t);
  }
  clock.t += 10;
}

describe("ObservedFanout: what one fan-out teaches", () => {
  const setup = (): { clock: ManualClock; observed: ObservedFanouts } => {
    const clock = new ManualClock();
    return { clock, observed: new ObservedFanouts(resolveOptions({ minSamples: 1 }), 8, clock) };
  };
  const quantilesOf = (o: ObservedFanouts, peers: PeerId[], k?: number) => {
    const t = o.get(observedSetKey(peers, k === undefined ? ALL : { kind: "quorum", k }));
    if (t === undefined) throw new Error("no tracker");
    return t.estimate(1_000_000 + 1_000);
  };

  it("all of n: the time of the last answer", () => {
    const { clock, observed } = setup();
    const f = observed.begin(["a", "b", "c"], ALL, clock.t, clock.t + 500);
    f?.answered(clock.t + 10);
    f?.answered(clock.t + 20);
    f?.answered(clock.t + 30);
    const e = quantilesOf(observed, ["a", "b", "c"]);
    expect(e.samples).toBe(1);
    expect(e.p50Ms).toBeCloseTo(30, 0);
  });

  it("k of n: the time of the k-th answer; later ones change nothing", () => {
    const { clock, observed } = setup();
    const f = observed.begin(["a", "b", "c"], { kind: "quorum", k: 2 }, clock.t, clock.t + 500);
    f?.answered(clock.t + 10);
    f?.answered(clock.t + 20);
    f?.answered(clock.t + 400);
    const e = quantilesOf(observed, ["a", "b", "c"], 2);
    expect(e.samples).toBe(1);
    expect(e.p50Ms).toBeCloseTo(20, 0);
  });

  it("a branch abandoned: right-censored at the largest age seen, once every branch has ended", () => {
    const { clock, observed } = setup();
    const f = observed.begin(["a", "b", "c"], ALL, clock.t, clock.t + 500);
    f?.ended("abandoned", 15);
    const t = observed.get(observedSetKey(["a", "b", "c"], ALL));
    expect(t?.estimate(clock.t + 20).censored).toBe(1); // still out: in flight at its age
    f?.answered(clock.t + 10);
    f?.answered(clock.t + 40);
    const e = t?.estimate(clock.t + 50);
    expect(e?.samples).toBe(0);
    expect(e?.censored).toBe(0);
    expect(e?.censoredEnds).toBe(1);
  });

  it("a branch at its deadline: censored at the deadline (a lower bound, never a sample); only failures: nothing", () => {
    const { clock, observed } = setup();
    const f = observed.begin(["a", "b"], ALL, clock.t, clock.t + 90);
    f?.answered(clock.t + 10);
    f?.ended("deadline", 90);
    const t = observed.get(observedSetKey(["a", "b"], ALL));
    expect(t?.estimate(clock.t + 100)).toMatchObject({ samples: 0, censoredEnds: 1, p50Kind: "lower-bound" });
    expect(t?.estimate(clock.t + 100).p50Ms).toBeCloseTo(90, 0);
    const g = observed.begin(["a", "b"], ALL, clock.t, clock.t + 90);
    g?.ended("failed", 1);
    g?.ended("failed", 2);
    expect(t?.estimate(clock.t + 100).censoredEnds).toBe(1);
    expect(t?.estimate(clock.t + 100).censored).toBe(0);
  });

  it("all of n: a cut branch's probe completion raises the censored end; every cut one completed: a sample", () => {
    const { clock, observed } = setup();
    const f = observed.begin(["a", "b", "c"], ALL, clock.t, clock.t + 10);
    f?.answered(clock.t + 5);
    f?.ended("deadline", 9); // c cut, b cut but left running as a probe
    f?.answered(clock.t + 30); // b's probe
    const set = observed.get(observedSetKey(["a", "b", "c"], ALL));
    expect(set?.estimate(clock.t + 40)).toMatchObject({ samples: 0, censored: 0, censoredEnds: 1 });
    expect(set?.estimate(clock.t + 40).p50Ms).toBeGreaterThanOrEqual(29); // T >= 30, not just > 9
    const g = observed.begin(["a", "b", "c"], ALL, clock.t, clock.t + 10);
    g?.answered(clock.t + 5);
    g?.answered(clock.t + 25); // both cut branches ran on as probes and completed
    expect(set?.estimate(clock.t + 40)).toMatchObject({ samples: 0, censoredEnds: 1, censored: 1 });
    g?.answered(clock.t + 35);
    expect(set?.estimate(clock.t + 40)).toMatchObject({ samples: 1, censoredEnds: 1, censored: 0 });
  });

  it("a cut fan-out whose probe answered is censored, not dropped, when too few others answered", () => {
    const { clock, observed } = setup();
    // all of 2: "bad" answered at once but the model rejected it (never answers), "slow" was cut and ran on
    const f = observed.begin(["bad", "slow"], ALL, clock.t, clock.t + 50);
    f?.ended("failed", 5);
    f?.answered(clock.t + 300, true);
    const e = observed.get(observedSetKey(["bad", "slow"], ALL))?.estimate(clock.t + 400);
    expect(e).toMatchObject({ samples: 0, censoredEnds: 1, p50Kind: "lower-bound" });
    expect(e?.p50Ms).toBeGreaterThanOrEqual(299);
  });

  it("k of n: ends at the k-th smallest bound once k branches ended, not at a later answer", () => {
    const ends: string[] = [];
    const f = new ObservedFanout(recorder(ends), 0, 2, 3);
    f.answered(5);
    f.ended("deadline", 9); // cut: it may have answered at 9.1
    expect(ends).toEqual(["censored 9"]); // no longer in flight: a third branch out cannot raise it
    f.answered(40); // a measurement branch's or probe's late answer: T <= 40, not = 40
    expect(ends).toEqual(["censored 9"]);
    const g = new ObservedFanout(recorder(ends), 0, 2, 3);
    g.answered(5);
    g.answered(7);
    expect(ends.at(-1)).toBe("complete 7");
  });

  it("keys a set by its members, in any order, and keeps at most maxSets", () => {
    const { clock, observed } = setup();
    expect(observedSetKey(["b", "a"], ALL)).toBe(observedSetKey(["a", "b"], ALL));
    expect(observedSetKey(["a", "b"], ALL)).not.toBe(observedSetKey(["a", "b"], { kind: "quorum", k: 1 }));
    for (let i = 0; i < 10; i++) observed.begin([`p${i}`], ALL, clock.t, clock.t + 10);
    expect(observed.size).toBe(8);
    expect(observed.get(observedSetKey(["p0"], ALL))).toBeUndefined();
    expect(observed.get(observedSetKey(["p9"], ALL))).toBeDefined();
    expect(observed.forgetPeer("p9")).toBe(true);
    expect(observed.get(observedSetKey(["p9"], ALL))).toBeUndefined();
    expect(new ObservedFanouts(resolveOptions(), 0, clock).begin(["a"], ALL, clock.t, clock.t + 1)).toBe(
      undefined,
    );
  });
});

describe("LatencyBook.fanout with observed completion times", () => {
  // 40 peers that queue together: each fan-out, every peer answers in 10 ms, or (one fan-out in
  // ten) every peer answers in 100 ms. Per peer F(10) = 0.9, so Π F_i(10) = 0.9^40 ≈ 0.015: the
  // independent product puts the fan-out p50 at 100 ms. The fan-outs themselves: p50 10 ms.
  const peers = Array.from({ length: 40 }, (_, i) => `peer-${String(i).padStart(2, "0")}`);
  const run = (observedFanoutSets?: number) => {
    const clock = new ManualClock();
    const book = new LatencyBook(
      {
        windowMs: 60_000,
        minSamples: 20,
        ...(observedFanoutSets === undefined ? {} : { observedFanoutSets }),
      },
      clock,
    );
    for (let i = 0; i < 60; i++) correlatedFanout(book, clock, peers, i % 10 === 9 ? 100 : 10);
    return { clock, book };
  };

  it("uses the set's own completion times once they are fresh: they see the correlation", () => {
    const { clock, book } = run();
    const e = book.fanout(peers, ALL, clock.t);
    expect(e.status).toBe("fresh");
    expect(e.basis).toBe("observed");
    expect(e.observedSamples).toBe(60);
    expect(e.p50Ms).toBeGreaterThan(9);
    expect(e.p50Ms).toBeLessThan(11);
    expect(e.p99Ms).toBeGreaterThan(95);
    // the same set in another order is the same observed set
    expect(book.fanout([...peers].reverse(), ALL, clock.t).basis).toBe("observed");
  });

  it("falls back to Π F_i while the set has too few observations, or when observation is off", () => {
    const off = run(0);
    const e = off.book.fanout(peers, ALL, off.clock.t);
    expect(e.basis).toBe("independent");
    expect(e.observedSamples).toBe(0);
    expect(e.p50Ms).toBeGreaterThan(90);

    const { clock, book } = run();
    const subset = peers.slice(0, 39); // never fanned out to as such
    expect(book.fanout(subset, ALL, clock.t).basis).toBe("independent");
  });

  it("sees a tail in progress: fan-outs still out raise the set's p99 as they age", () => {
    const { clock, book } = run();
    const before = book.fanout(peers, ALL, clock.t).p99Ms;
    for (let i = 0; i < 3; i++) book.beginFanout(peers, ALL, clock.t, clock.t + 10_000);
    clock.t += 500;
    const during = book.fanout(peers, ALL, clock.t);
    expect(during.basis).toBe("observed");
    expect(during.p99Ms).toBeGreaterThan(before);
    expect(during.p99Ms).toBeGreaterThanOrEqual(400);
  });

  it("a restarted peer starts its sets afresh: unknown, then independent until observed again", () => {
    const { clock, book } = run();
    book.reset("peer-07");
    const e = book.fanout(peers, ALL, clock.t);
    expect(e.status).toBe("unknown");
    expect(e.basis).toBe("independent");
    expect(e.observedSamples).toBe(0);
  });
});

/** An InFlight that writes how it ended. */
function recorder(ends: string[]): InFlight {
  return {
    complete: (ms) => ends.push(`complete ${ms}`),
    timedOut: () => ends.push("timedOut"),
    abandoned: (ms) => ends.push(`censored ${ms}`),
    failed: () => ends.push("failed"),
  };
}

describe("ObservedFanout: never above the fan-out's true time (property)", () => {
  // Each branch has a true latency (Infinity: it fails at `failAt`); the coordinator cuts it at `cutAt`
  // unless it answered by then, and a probe runs on to `probeMs` at most. The ends are reported in time
  // order; the recorded end (and the age it was in flight to) is at most T = the k-th smallest latency.
  const branch = fc.record({
    latency: fc.oneof(fc.double({ min: 0, max: 200, noNaN: true }), fc.constant(Infinity)),
    failAt: fc.double({ min: 0, max: 200, noNaN: true }),
    cutAt: fc.double({ min: 0, max: 200, noNaN: true }),
    probe: fc.boolean(),
  });
  it("holds for random latencies, cuts, probes and failures, any k", () => {
    fc.assert(
      fc.property(
        fc.array(branch, { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 400, noNaN: true }),
        (bs, kShare, probeMs) => {
          const k = 1 + Math.min(bs.length - 1, Math.floor(kShare * bs.length));
          const events: { at: number; end: (f: ObservedFanout) => void }[] = [];
          for (const b of bs) {
            if (b.latency === Infinity) {
              const at = b.probe ? b.failAt : Math.min(b.failAt, b.cutAt);
              if (b.failAt <= at) events.push({ at, end: (f) => f.ended("failed", at) });
              else events.push({ at, end: (f) => f.ended("deadline", at) });
            } else if (b.latency <= b.cutAt || (b.probe && b.latency <= Math.max(b.cutAt, probeMs))) {
              events.push({ at: b.latency, end: (f) => f.answered(b.latency) });
            } else {
              const at = b.probe ? Math.max(b.cutAt, probeMs) : b.cutAt;
              events.push({ at, end: (f) => f.ended("abandoned", at) });
            }
          }
          events.sort((x, y) => x.at - y.at);
          const sorted = bs.map((b) => b.latency).sort((x, y) => x - y);
          const truth = sorted[k - 1] as number;
          const ends: string[] = [];
          const f = new ObservedFanout(recorder(ends), 0, k, bs.length);
          let endedAt = NaN;
          for (const e of events) {
            e.end(f);
            if (ends.length > 0 && Number.isNaN(endedAt)) endedAt = e.at;
          }
          expect(ends.length).toBe(1);
          const [how, value] = (ends[0] as string).split(" ");
          if (how === "failed") return;
          // in flight up to its end: T was above every age it was seen at
          expect(endedAt).toBeLessThanOrEqual(truth);
          expect(Number(value)).toBeLessThanOrEqual(truth);
          if (how === "complete") expect(Number(value)).toBe(truth);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
