import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AbandonLedger } from "../../src/engine/abandon-ledger.js";
import type { AbandonLedgerOptions, LedgerFanout } from "../../src/engine/abandon-ledger.js";

const T0 = 1_000_000;

/** A fan-out that cut one branch of `lostMs` (and let another answer). */
function cutOne(now: number, lostMs: number, mode: LedgerFanout["mode"] = "speculate"): LedgerFanout {
  return {
    mode,
    now,
    branches: [
      { peer: "a", outcome: "committed", lostWorkMs: 0 },
      { peer: "b", outcome: mode === "speculate" ? "abandoned" : "late", lostWorkMs: lostMs },
    ],
  };
}

describe("AbandonLedger", () => {
  it("starts from the prior, flagged, and with enough cut fan-outs in the window is their mean lost work", () => {
    const ledger = new AbandonLedger({ priorMs: 5, minSamples: 1 });
    expect(ledger.expectedAbandonCostMs(["a", "b"], T0)).toBe(5);
    expect(ledger.cost(["a", "b"], T0)).toEqual({ ms: 5, kind: "prior", samples: 0, ageMs: Infinity });
    ledger.recordFanout(cutOne(T0, 80));
    expect(ledger.expectedAbandonCostMs(["a", "b"], T0)).toBeCloseTo(80, 9);
    expect(ledger.cost(["a", "b"], T0 + 3)).toEqual({ ms: 80, kind: "measured", samples: 1, ageMs: 3 });
    expect(ledger.peerStats("b")).toEqual({ abandoned: 1, late: 0, lostWorkMs: 80 });
  });

  it("is unknown — the prior, said so — below minSamples cut fan-outs in the window", () => {
    const ledger = new AbandonLedger({ priorMs: 2 }); // minSamples 5 by default
    for (let i = 0; i < 4; i++) ledger.recordFanout(cutOne(T0 + i, 100));
    expect(ledger.cost(2, T0 + 4)).toMatchObject({ ms: 2, kind: "prior", samples: 4, ageMs: 1 });
    ledger.recordFanout(cutOne(T0 + 4, 100));
    expect(ledger.cost(2, T0 + 4)).toMatchObject({ ms: 100, kind: "measured", samples: 5, ageMs: 0 });
    expect(ledger.stats(T0 + 4).window).toMatchObject({ cutFanouts: 5, cutBranches: 5, chargedMs: 500 });
  });

  it("a fan-out that abandoned nothing does not move the conditional cost", () => {
    const ledger = new AbandonLedger({ priorMs: 10, minSamples: 1 });
    ledger.recordFanout({
      mode: "speculate",
      now: T0,
      branches: [{ peer: "a", outcome: "committed", lostWorkMs: 0 }],
    });
    expect(ledger.expectedAbandonCostMs(["a"], T0)).toBe(10);
    expect(ledger.stats()).toMatchObject({ speculativeFanouts: 1, abandonedFanouts: 0 });
    expect(ledger.stats().window).toMatchObject({ fanouts: 1, cutFanouts: 0 });
  });

  it("scales with abandoned branches per fan-out, capped by the set size", () => {
    const ledger = new AbandonLedger({ minSamples: 1 });
    ledger.recordFanout({
      mode: "speculate",
      now: T0,
      branches: [
        { peer: "a", outcome: "abandoned", lostWorkMs: 30 },
        { peer: "b", outcome: "late", lostWorkMs: 10 },
        { peer: "c", outcome: "abandoned", lostWorkMs: 20 },
      ],
    });
    expect(ledger.expectedAbandonCostMs(["a", "b", "c"], T0)).toBeCloseTo(60, 9);
    expect(ledger.expectedAbandonCostMs(["a"], T0)).toBeCloseTo(20, 9);
  });

  it("learns from every cut branch whatever the mode: a synchronous fan-out's late branches are charged too", () => {
    const ledger = new AbandonLedger({ priorMs: 1, minSamples: 1 });
    ledger.recordFanout({
      mode: "synchronous",
      now: T0,
      branches: [{ peer: "a", outcome: "late", lostWorkMs: 200 }],
    });
    expect(ledger.expectedAbandonCostMs(["a"], T0)).toBe(200);
    expect(ledger.stats()).toMatchObject({
      synchronousLateLostMs: 200,
      chargedMs: 200,
      cutFanouts: 1,
      abandonedFanouts: 0, // the speculative figures stay speculative
    });
    // a fan-out recorded without a mode is learnt from the same way
    ledger.recordFanout({ now: T0, branches: [{ peer: "a", outcome: "abandoned", lostWorkMs: 100 }] });
    expect(ledger.expectedAbandonCostMs(["a"], T0)).toBe(150);
  });

  it("never charges measurement branches or horizon probes; reports their work apart", () => {
    const ledger = new AbandonLedger({ minSamples: 1 });
    ledger.recordFanout({
      mode: "synchronous",
      now: T0,
      branches: [
        { peer: "a", outcome: "abandoned", lostWorkMs: 0, measurement: true, measurementWorkMs: 40 },
        { peer: "b", outcome: "late", lostWorkMs: 90, probe: true, probeWorkMs: 300 },
      ],
    });
    expect(ledger.cost(2, T0)).toMatchObject({ ms: 0, kind: "prior", samples: 0 });
    expect(ledger.stats()).toMatchObject({
      cutBranches: 0,
      chargedMs: 0,
      measurementBranches: 1,
      measurementWorkMs: 40,
      probeBranches: 1,
      probeWorkMs: 300,
    });
    expect(ledger.peerStats("b")).toEqual({ abandoned: 0, late: 0, lostWorkMs: 0 });
  });

  it("forgets a stall within one window, and weighs lost work by the opportunity factor", () => {
    const ledger = new AbandonLedger({ minSamples: 1, opportunityFactor: 2, windowMs: 6_000, slices: 6 });
    ledger.recordFanout(cutOne(T0, 50));
    expect(ledger.expectedAbandonCostMs(["a"], T0)).toBeCloseTo(100, 9);
    expect(ledger.expectedAbandonCostMs(["a"], T0 + 4_999)).toBeCloseTo(100, 9); // still in the window
    expect(ledger.cost(["a"], T0 + 7_000)).toEqual({ ms: 0, kind: "prior", samples: 0, ageMs: Infinity });
  });

  it("after a stall the cost is back at its quiet level within windowMs · (1 + 1/slices)", () => {
    const ledger = new AbandonLedger({ priorMs: 1 }); // the latency book's window: 10 s, 6 slices
    let t = T0;
    const tick = (lostMs: number, every: number, until: number): void => {
      for (; t < until; t += every) ledger.recordFanout(cutOne(t, lostMs));
    };
    tick(5, 100, T0 + 20_000); // quiet: a cut fan-out every 100 ms losing 5 ms
    expect(ledger.expectedAbandonCostMs(2, t)).toBeCloseTo(5, 9);
    tick(450, 500, T0 + 22_000); // a 2 s stall behind a gateway
    expect(ledger.expectedAbandonCostMs(2, t)).toBeGreaterThan(5);
    const stallEnd = t;
    tick(5, 100, stallEnd + 10_000 * (1 + 1 / 6));
    expect(ledger.expectedAbandonCostMs(2, t)).toBeCloseTo(5, 9);
  });

  it("forgets any burst within windowMs · (1 + 1/slices) of its last sample (property)", () => {
    const sample = fc.record({
      dt: fc.double({ min: 0, max: 2_000, noNaN: true }),
      lostMs: fc.double({ min: 0, max: 1_000, noNaN: true }),
      branches: fc.integer({ min: 1, max: 4 }),
    });
    fc.assert(
      fc.property(
        fc.record({
          windowMs: fc.double({ min: 100, max: 30_000, noNaN: true }),
          slices: fc.integer({ min: 1, max: 12 }),
          minSamples: fc.integer({ min: 1, max: 5 }),
        }),
        fc.array(sample, { maxLength: 30 }),
        fc.array(sample, { minLength: 1, maxLength: 30 }),
        fc.array(sample, { maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        (options: AbandonLedgerOptions, before, burst, after, size) => {
          const windowMs = options.windowMs as number;
          const slices = options.slices as number;
          const quiet = new AbandonLedger({ ...options, priorMs: 3 });
          const burstLedger = new AbandonLedger({ ...options, priorMs: 3 });
          const fanout = (now: number, s: { lostMs: number; branches: number }): LedgerFanout => ({
            mode: "speculate",
            now,
            branches: Array.from({ length: s.branches }, (_, i) => ({
              peer: `p${i}`,
              outcome: "abandoned" as const,
              lostWorkMs: s.lostMs,
            })),
          });
          let t = T0;
          for (const s of before) {
            t += s.dt;
            quiet.recordFanout(fanout(t, s));
            burstLedger.recordFanout(fanout(t, s));
          }
          for (const s of burst) {
            t += s.dt;
            burstLedger.recordFanout(fanout(t, { lostMs: s.lostMs * 10 + 100, branches: s.branches }));
          }
          const forgotten = t + windowMs * (1 + 1 / slices);
          for (const s of after) {
            t += s.dt;
            quiet.recordFanout(fanout(t, s));
            burstLedger.recordFanout(fanout(t, s));
          }
          const at = Math.max(t, forgotten);
          expect(burstLedger.cost(size, at)).toEqual(quiet.cost(size, at));
        },
      ),
      { numRuns: 300, seed: 31 },
    );
  });

  it("rejects bad and unknown options naming them", () => {
    expect(() => new AbandonLedger({ alpha: 0 } as AbandonLedgerOptions)).toThrow(/alpha/);
    expect(() => new AbandonLedger({ priorMs: -1 })).toThrow(/priorMs/);
    expect(() => new AbandonLedger({ windowMs: 0 })).toThrow(
      /abandonLedger\.windowMs: got 0, expected a number > 0/,
    );
    expect(() => new AbandonLedger({ slices: 1.5 })).toThrow(/slices/);
    expect(() => new AbandonLedger({ minSamples: 0 })).toThrow(/minSamples/);
  });
});
