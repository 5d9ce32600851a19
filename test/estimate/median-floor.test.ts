/**
 * The p50 floor (`CensoredCdf.p50FloorMs`): the one p50 the rule degrades an unknown estimate on. A
 * lower confidence bound of the median — never above the Kaplan–Meier median of the same observations,
 * and as many of those that decide it at or beyond it as a one-sided sign test at `P50_FLOOR_ALPHA` asks.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { medianAbove, P50_FLOOR_ALPHA } from "../../src/estimate/median-bound.js";
import { resolveOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import { decide } from "../../src/policy/decide.js";
import { ManualClock } from "./helpers.js";

interface Observations {
  readonly completed: readonly number[];
  readonly cut: readonly number[];
  readonly inFlight: readonly number[];
}

/** A peer holding these observations, as of the clock's time. */
function peerWith(o: Observations, clock: ManualClock): PeerLatency {
  const p = new PeerLatency("p", resolveOptions(), clock);
  const now = clock.t;
  for (const ms of o.inFlight) p.begin(now - ms);
  for (const ms of o.completed) p.record(ms, now);
  for (const ms of o.cut) p.recordCensored(ms, now);
  return p;
}

/**
 * The Kaplan–Meier median of the raw observations, written out independently of the estimator: the
 * smallest completion time at which survival drops to one half or below (Infinity when it never does).
 */
function kaplanMeierMedian(o: Observations): number {
  const censored = [...o.cut, ...o.inFlight];
  const times = [...new Set(o.completed)].sort((a, b) => a - b);
  let survival = 1;
  for (const t of times) {
    const atRisk = o.completed.filter((c) => c >= t).length + censored.filter((c) => c >= t).length;
    const done = o.completed.filter((c) => c === t).length;
    survival *= 1 - done / atRisk;
    if (survival <= 0.5) return t;
  }
  return Infinity;
}

/** P(Bin(n, ½) >= a), summed term by term (n stays small here). */
function signTestP(a: number, n: number): number {
  let p = 0;
  let choose = 1; // C(n, i), from i = 0
  for (let i = 0; i <= n; i++) {
    if (i >= a) p += choose / 2 ** n;
    choose = (choose * (n - i)) / (i + 1);
  }
  return p;
}

const msArb = fc.double({ min: 0.5, max: 400, noNaN: true });
const observationsArb: fc.Arbitrary<Observations> = fc.record({
  completed: fc.array(msArb, { maxLength: 12 }),
  cut: fc.array(msArb, { maxLength: 12 }),
  inFlight: fc.array(msArb, { maxLength: 4 }),
});
/** A completion is kept in whole µs: within this of the value recorded. */
const US = 0.001;

describe("the p50 floor", () => {
  it("is never above the Kaplan–Meier median, and enough deciding observations reach it for the sign test", () => {
    fc.assert(
      fc.property(observationsArb, (o) => {
        const clock = new ManualClock();
        clock.t = 1_000;
        const floor = peerWith(o, clock).cdf(clock.t).p50FloorMs();
        if (Number.isNaN(floor)) return;
        expect(floor).toBeGreaterThan(0);
        expect(floor).toBeLessThanOrEqual(kaplanMeierMedian(o) + US);
        // deciding: every completion, and the calls cut (or in flight) at or beyond the floor
        const censored = [...o.cut, ...o.inFlight];
        const above =
          o.completed.filter((c) => c >= floor - US).length + censored.filter((c) => c >= floor).length;
        const below = o.completed.filter((c) => c < floor - US).length;
        expect(signTestP(above, above + below)).toBeLessThanOrEqual(P50_FLOOR_ALPHA);
      }),
    );
  });

  it("places the median above t exactly when the sign test's p-value is at most P50_FLOOR_ALPHA", () => {
    for (let n = 0; n <= 60; n++) {
      for (let above = 0; above <= n; above++) {
        expect(medianAbove(above, n - above)).toBe(signTestP(above, n) <= P50_FLOOR_ALPHA);
      }
    }
    // 4 all reaching t is the least that does (0.5^4 = 0.0625; 3 of 3 is 0.125)
    expect(medianAbove(3, 0)).toBe(false);
    expect(medianAbove(4, 0)).toBe(true);
    // past 1,024 observations the counts are scaled down: the same share decides, never a smaller one
    expect(medianAbove(2_000, 2_000)).toBe(false);
    expect(medianAbove(2_200, 1_800)).toBe(true);
  });

  it("holds whatever the calls cut short would have taken, when none was cut below it", () => {
    fc.assert(
      fc.property(observationsArb, fc.array(fc.double({ min: 0, max: 1e4, noNaN: true })), (o, extra) => {
        const clock = new ManualClock();
        clock.t = 1_000;
        const floor = peerWith(o, clock).cdf(clock.t).p50FloorMs();
        const censored = [...o.cut, ...o.inFlight];
        if (Number.isNaN(floor) || censored.some((c) => c < floor)) return;
        // any completion of the censored calls: each took longer than its age, by any amount
        const all = [...o.completed, ...censored.map((c, i) => c + (extra[i] ?? 0))];
        expect(all.filter((x) => x >= floor - US).length * 2).toBeGreaterThan(all.length);
      }),
      { numRuns: 500 }, // about one case in seven has no call cut below its floor
    );
  });

  it("reads a thin member cut short of the budget, with answers beyond it, as far as four of them reach", () => {
    // the 20 ms coordinator's picture: branches cut at 7–10 ms, horizon-probe answers at 31 and 40
    const clock = new ManualClock();
    clock.t = 1_000;
    const thin = { completed: [31.5, 40.4], cut: [7.3, 8.3, 8.9, 8.9, 8.9, 9.4, 10.3], inFlight: [] };
    const p = peerWith(thin, clock);
    p.refresh(clock.t);
    expect(p.status).toBe("unknown");
    // two answers are a sample median, not a bound: 4 observations reach 9.4 ms (the bucket below it)
    const floor = p.cdf(clock.t).p50FloorMs();
    expect(floor).toBeGreaterThanOrEqual(9.3);
    expect(floor).toBeLessThanOrEqual(9.4);
    // four answers beyond the cuts: at least 31 ms, at or below the p50 that counts the cuts
    const four = peerWith({ ...thin, completed: [31.5, 33, 36, 40.4] }, clock).cdf(clock.t);
    expect(four.p50FloorMs()).toBeGreaterThanOrEqual(31);
    expect(four.p50FloorMs()).toBeLessThanOrEqual(Math.min(31.5, four.quantile(0.5)));
    // answers below the cuts count against it: a member that answers in 2 ms has no floor past 2 ms
    const fast = peerWith({ completed: [2, 2.1, 2.2], cut: [9, 9], inFlight: [] }, clock);
    expect(fast.cdf(clock.t).p50FloorMs()).toBeLessThanOrEqual(2.2);
    // calls cut below the floor may have been the fast ones: it is capped at the p50 that counts them
    const cutEarly = peerWith(
      { completed: [1], cut: [2, 2, 2, 2, 2, 2], inFlight: [100, 100, 100, 100, 100, 100] },
      clock,
    ).cdf(clock.t);
    expect(cutEarly.quantile(0.5)).toBeLessThanOrEqual(2);
    expect(cutEarly.p50FloorMs()).toBe(cutEarly.quantile(0.5));
    // without them, six of seven at 100 ms place it there
    const kept = peerWith({ completed: [1], cut: [], inFlight: [100, 100, 100, 100, 100, 100] }, clock);
    expect(kept.cdf(clock.t).p50FloorMs()).toBeGreaterThanOrEqual(98.4);
    // one observation decides nothing
    expect(
      peerWith({ completed: [], cut: [50], inFlight: [] }, clock)
        .cdf(clock.t)
        .p50FloorMs(),
    ).toBeNaN();
  });

  it("of an unknown all-of-n set is its largest member's, and the rule degrades on nothing above it", () => {
    fc.assert(
      fc.property(fc.array(observationsArb, { minLength: 1, maxLength: 4 }), msArb, (members, budgetMs) => {
        const clock = new ManualClock();
        clock.t = 1_000;
        const book = new LatencyBook({ fanoutTickMs: 0 }, clock);
        const ids = members.map((_, i) => `m${i}`);
        members.forEach((o, i) => {
          const p = book.peerOf(ids[i] as string);
          for (const ms of o.completed) p.record(ms, clock.t);
          for (const ms of o.cut) p.recordCensored(ms, clock.t);
        });
        const e = book.fanout([...ids, "never-seen"], { kind: "all" }, clock.t);
        const floors = members.map((o) =>
          peerWith({ ...o, inFlight: [] }, clock)
            .cdf(clock.t)
            .p50FloorMs(),
        );
        const largest = Math.max(...floors.filter((f) => !Number.isNaN(f)));
        if (Number.isFinite(largest)) expect(e.p50FloorMs).toBe(largest);
        else expect(e.p50FloorMs).toBeUndefined();
        // each member's floor is at most its median, so the set's is at most the largest median: the
        // fan-out waits for that member
        if (e.p50FloorMs !== undefined) {
          const medians = members.map((o) => kaplanMeierMedian({ ...o, inFlight: [] }));
          expect(e.p50FloorMs).toBeLessThanOrEqual(Math.max(...medians) + US);
        }
        // the rule degrades this unknown estimate exactly when the budget is at or below that floor
        const c = decide({
          policy: "p99-boundary",
          budgetMs,
          estimate: e,
          abandonCostMs: 0,
          relevant: true,
          speculationFeasible: true,
          anyPeerLive: true,
          hasFallback: true,
        });
        const degrades = e.p50FloorMs !== undefined && budgetMs <= e.p50FloorMs;
        expect(c.mode).toBe(degrades ? "degrade" : "synchronous");
      }),
    );
  });
});
