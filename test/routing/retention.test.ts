import { describe, expect, it } from "vitest";
import { marginalValue, retain, type RetentionItem } from "../../src/routing/retention.js";
import { DecayedCounts } from "../../src/routing/reuse-stats.js";

function item(signature: number, o: Partial<RetentionItem>): RetentionItem {
  return { signature, size: 1, resident: true, expectedReuse: 1, saved: 1, lastUsed: 0, popularity: 0, ...o };
}

const sigs = (xs: RetentionItem[]): number[] => xs.map((x) => x.signature).sort((a, b) => a - b);

describe("retention", () => {
  it("marginal value is reuse × saved − holding × size", () => {
    expect(marginalValue(item(1, { expectedReuse: 3, saved: 4, size: 2 }), 0.5)).toBe(11);
  });

  it("keeps by value density, not recency (hand-computed knapsack)", () => {
    // budget 5; values 12 (size 4, density 3), 9 (size 3, density 3... tie-broken by residency), 8 (size 2, density 4), 1 (size 1)
    const items = [
      item(1, { size: 4, expectedReuse: 12, lastUsed: 1 }),
      item(2, { size: 2, expectedReuse: 8, lastUsed: 9 }),
      item(3, { size: 3, expectedReuse: 9, resident: false, lastUsed: 10 }),
      item(4, { size: 1, expectedReuse: 1, lastUsed: 10 }),
    ];
    // greedy by density: #2 (4/unit, size 2) → #1 (3, size 4: does not fit, 6 > 5) → #3 (3, size 3: fits, 5) → full
    expect(sigs(retain("marginal-value", items, 5))).toEqual([2, 3]);
    // LRU keeps the most recent that fit: #3 (10), #4 (10), #2 (9) → sizes 3+1 = 4, then 2 does not fit
    expect(sigs(retain("lru", items, 5))).toEqual([3, 4]);
  });

  it("drops objects whose holding cost exceeds their expected value", () => {
    const items = [item(1, { expectedReuse: 0.1, saved: 1 }), item(2, { expectedReuse: 5, saved: 1 })];
    expect(sigs(retain("marginal-value", items, 10, { holdingCost: 1 }))).toEqual([2]);
  });

  it("falls back to the single most valuable item when it beats the greedy set", () => {
    const items = [item(1, { size: 1, expectedReuse: 2 }), item(2, { size: 10, expectedReuse: 15 })];
    // greedy by density keeps #1 (value 2) and #2 no longer fits; #2 alone is worth 15
    expect(sigs(retain("marginal-value", items, 10))).toEqual([2]);
  });

  it("popularity keeps the most requested (GreedyCache)", () => {
    const items = [item(1, { popularity: 5 }), item(2, { popularity: 9 }), item(3, { popularity: 1 })];
    expect(sigs(retain("popularity", items, 2))).toEqual([1, 2]);
  });

  it("never exceeds the budget", () => {
    const items = Array.from({ length: 30 }, (_, i) =>
      item(i + 1, { size: 1 + (i % 4), expectedReuse: (i * 7) % 11, lastUsed: i, popularity: (i * 3) % 5 }),
    );
    for (const rule of ["marginal-value", "lru", "popularity"] as const) {
      const kept = retain(rule, items, 13);
      expect(kept.reduce((a, b) => a + b.size, 0)).toBeLessThanOrEqual(13);
    }
  });

  it("rejects a negative budget and a non-positive size", () => {
    expect(() => retain("lru", [], -1)).toThrow(/budget/);
    expect(() => retain("lru", [item(1, { size: 0 })], 1)).toThrow(/size/);
  });
});

describe("DecayedCounts", () => {
  it("halves a count after one half-life and keeps rebasing exact", () => {
    const d = new DecayedCounts(10);
    d.record(7, 0);
    expect(d.count(7, 10)).toBeCloseTo(0.5);
    d.record(7, 1000);
    d.record(7, 1000);
    expect(d.count(7, 1000)).toBeCloseTo(2);
    expect(d.count(8, 1000)).toBe(0);
  });
});
