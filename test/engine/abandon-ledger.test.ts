import { describe, expect, it } from "vitest";
import { AbandonLedger } from "../../src/engine/abandon-ledger.js";

describe("AbandonLedger", () => {
  it("starts from the prior and moves by EWMA on lost work per abandoned fan-out", () => {
    const ledger = new AbandonLedger({ priorMs: 5, halfLifeMs: Infinity });
    expect(ledger.expectedAbandonCostMs(["a", "b"], 0)).toBe(5);
    ledger.recordFanout({
      mode: "speculate",
      now: 0,
      branches: [
        { peer: "a", outcome: "committed", lostWorkMs: 0 },
        { peer: "b", outcome: "abandoned", lostWorkMs: 80 },
      ],
    });
    expect(ledger.expectedAbandonCostMs(["a", "b"], 0)).toBeCloseTo(20, 9);
    expect(ledger.peerStats("b")).toEqual({ abandoned: 1, late: 0, lostWorkMs: 80 });
  });

  it("a fan-out that abandoned nothing does not move the conditional cost", () => {
    const ledger = new AbandonLedger({ priorMs: 10, halfLifeMs: Infinity });
    ledger.recordFanout({
      mode: "speculate",
      now: 0,
      branches: [{ peer: "a", outcome: "committed", lostWorkMs: 0 }],
    });
    expect(ledger.expectedAbandonCostMs(["a"], 0)).toBe(10);
    expect(ledger.stats()).toMatchObject({ speculativeFanouts: 1, abandonedFanouts: 0 });
  });

  it("scales with abandoned branches per fan-out, capped by the set size", () => {
    const ledger = new AbandonLedger({ alpha: 1, halfLifeMs: Infinity });
    ledger.recordFanout({
      mode: "speculate",
      now: 0,
      branches: [
        { peer: "a", outcome: "abandoned", lostWorkMs: 30 },
        { peer: "b", outcome: "late", lostWorkMs: 10 },
        { peer: "c", outcome: "abandoned", lostWorkMs: 20 },
      ],
    });
    expect(ledger.expectedAbandonCostMs(["a", "b", "c"], 0)).toBeCloseTo(60, 9);
    expect(ledger.expectedAbandonCostMs(["a"], 0)).toBeCloseTo(20, 9);
  });

  it("synchronous late work is reported, not charged", () => {
    const ledger = new AbandonLedger({ priorMs: 1 });
    ledger.recordFanout({
      mode: "synchronous",
      now: 0,
      branches: [{ peer: "a", outcome: "late", lostWorkMs: 200 }],
    });
    expect(ledger.expectedAbandonCostMs(["a"], 0)).toBe(1);
    expect(ledger.stats()).toMatchObject({ synchronousLateLostMs: 200, chargedMs: 0 });
  });

  it("decays back toward the prior without new evidence, and weighs lost work by the opportunity factor", () => {
    const ledger = new AbandonLedger({ priorMs: 0, alpha: 1, halfLifeMs: 1000, opportunityFactor: 2 });
    ledger.recordFanout({
      mode: "speculate",
      now: 0,
      branches: [{ peer: "a", outcome: "abandoned", lostWorkMs: 50 }],
    });
    expect(ledger.expectedAbandonCostMs(["a"], 0)).toBeCloseTo(100, 9);
    expect(ledger.expectedAbandonCostMs(["a"], 1000)).toBeCloseTo(50, 9);
    expect(ledger.expectedAbandonCostMs(["a"], 2000)).toBeCloseTo(25, 9);
  });

  it("rejects bad options naming them", () => {
    expect(() => new AbandonLedger({ alpha: 0 })).toThrow(/alpha/);
    expect(() => new AbandonLedger({ priorMs: -1 })).toThrow(/priorMs/);
  });
});
