/** The direct measurement fan-outs are moved away from the policies' bursts. */
import { describe, expect, it } from "vitest";
import { staggered } from "../../src/testbed/load-generator.js";

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
