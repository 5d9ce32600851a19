/** The direct measurement fan-outs are moved away from the policies' bursts; the policies' copies are shuffled. */
import { describe, expect, it } from "vitest";
import { policyOrder, staggered } from "../../src/testbed/load-generator.js";

describe("staggered measurement times", () => {
  it("moves each draw to the middle of its gap between requests, sharing a gap evenly", () => {
    const got = staggered([50, 120, 130, 250], [100, 200, 400]);
    const want = [50, 100 + 100 / 3, 100 + 200 / 3, 300];
    expect(got).toHaveLength(want.length);
    want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, 9));
  });
  it("keeps the draws when there is nothing to avoid", () => {
    expect(staggered([3, 7], [])).toEqual([3, 7]);
  });
  it("never lands on a request's send time", () => {
    const avoid = Array.from({ length: 50 }, (_, i) => i * 37 + (i % 3) * 5);
    const drawn = Array.from({ length: 80 }, (_, i) => i * 23.5);
    for (const t of staggered(drawn, avoid)) expect(avoid.some((a) => Math.abs(a - t) < 1)).toBe(false);
  });
});

describe("the order of a request's policy copies", () => {
  const policies = ["naive-p50", "p99-boundary", "always-sync", "never"] as const;
  const orders = Array.from({ length: 4_000 }, (_, i) => policyOrder(policies, 7, "coord-90ms", i));

  it("is a permutation, the same for the same request", () => {
    for (const o of orders.slice(0, 50)) expect([...o].sort()).toEqual([...policies].sort());
    expect(policyOrder(policies, 7, "coord-90ms", 12)).toEqual(orders[12]);
  });

  it("puts every policy in every slot, and after every other policy, about equally often", () => {
    const k = policies.length;
    for (const p of policies) {
      for (let slot = 0; slot < k; slot++) {
        const n = orders.filter((o) => o[slot] === p).length;
        expect(n / orders.length).toBeGreaterThan(1 / k - 0.03);
        expect(n / orders.length).toBeLessThan(1 / k + 0.03);
      }
      // a fixed rotation sends each policy after one and the same other policy every time
      const before = new Set(orders.flatMap((o) => (o.indexOf(p) > 0 ? [o[o.indexOf(p) - 1]] : [])));
      expect(before.size).toBe(k - 1);
    }
  });
});
