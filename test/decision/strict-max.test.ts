import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { strictMaxIndex } from "../../src/decision/strict-max.js";

describe("strictMaxIndex", () => {
  it("is the index of the one largest value, or -1 when the top is shared or there is none", () => {
    expect(strictMaxIndex([1, 3, 2])).toBe(1);
    expect(strictMaxIndex([3, 1, 3])).toBe(-1);
    expect(strictMaxIndex([])).toBe(-1);
    expect(strictMaxIndex([-Infinity])).toBe(-1);
    expect(strictMaxIndex([-Infinity, 0])).toBe(1);
  });

  it("agrees with the definition on any tally (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -3, max: 3 }), { maxLength: 6 }), (xs) => {
        const top = Math.max(...xs);
        const at = xs.flatMap((x, i) => (x === top ? [i] : []));
        expect(strictMaxIndex(xs)).toBe(at.length === 1 ? at[0] : -1);
      }),
      { numRuns: 2_000, seed: 3 },
    );
  });
});
