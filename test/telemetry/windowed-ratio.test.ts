import { describe, expect, it } from "vitest";
import { WindowedRatio } from "../../src/telemetry/windowed-ratio.js";

describe("WindowedRatio", () => {
  it("is NaN with no events, num/den within the window, and forgets buckets that left it", () => {
    const r = new WindowedRatio(10_000, 10);
    expect(r.ratio(0)).toBeNaN();
    r.add(0, 1, 4);
    r.add(500, 1, 1);
    expect(r.ratio(900)).toBeCloseTo(2 / 5);
    r.add(5_000, 3, 3);
    expect(r.totals(9_999)).toEqual({ num: 5, den: 8 });
    // at 10_000 the first bucket [0, 1000) has left the window
    expect(r.totals(10_000)).toEqual({ num: 3, den: 3 });
    expect(r.ratio(30_000)).toBeNaN();
    // a slot reused by a newer bucket starts from zero
    r.add(20_500, 0, 2);
    expect(r.totals(20_900)).toEqual({ num: 0, den: 2 });
  });

  it("rejects a bad window", () => {
    expect(() => new WindowedRatio(0, 10)).toThrow(/windowMs/);
    expect(() => new WindowedRatio(1000, 0)).toThrow(/buckets/);
  });
});
