import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import { classify } from "../../src/policy/classify.js";
import type { Mode } from "../../src/policy/types.js";
import { SpeculationBudgetViolation } from "../../src/policy/violation.js";

/** The founding note's reference code, transcribed literally: should_speculate + issue_branch. */
function reference(budget: number, p50: number, p99: number, abandon: number, relevant: boolean): Mode {
  const shouldSpeculate = (): boolean => {
    if (budget <= 0) throw new Error("violation: budget");
    if (p99 < p50) throw new Error("violation: p99 < p50");
    if (!relevant) return false;
    const required = p99 + abandon;
    if (budget > required) return true;
    if (budget > p50) return false;
    return false;
  };
  if (shouldSpeculate()) return "speculate";
  if (budget <= p50) return "degrade"; // the note's code raises here: "must fall back to local/cached decision"
  return "synchronous";
}

/** Small integers hit the equality boundaries often; doubles cover the rest. */
const ms = fc.oneof(
  fc.integer({ min: 0, max: 50 }),
  fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
);
const budgetArb = fc.oneof(
  fc.integer({ min: -5, max: 60 }),
  fc.double({ min: -1e3, max: 1e6, noNaN: true, noDefaultInfinity: true }),
);

const ORDER: Record<Mode, number> = { degrade: 0, synchronous: 1, speculate: 2 };

describe("classify", () => {
  it("decides exactly as the founding note's reference code, violations included", () => {
    fc.assert(
      fc.property(budgetArb, ms, ms, ms, fc.boolean(), (budget, p50, p99, abandon, relevant) => {
        let expected: Mode | "violation";
        try {
          expected = reference(budget, p50, p99, abandon, relevant);
        } catch {
          expected = "violation";
        }
        if (expected === "violation") {
          expect(() => classify(budget, p50, p99, abandon, relevant)).toThrow(SpeculationBudgetViolation);
        } else {
          expect(classify(budget, p50, p99, abandon, relevant).mode).toBe(expected);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps each mode inside its region", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 100 }),
        fc.boolean(),
        (budget, a, b, abandon, relevant) => {
          const p50 = Math.min(a, b);
          const p99 = Math.max(a, b);
          const c = classify(budget, p50, p99, abandon, relevant);
          expect(c).toMatchObject({
            budgetMs: budget,
            fanoutP50Ms: p50,
            fanoutP99Ms: p99,
            abandonCostMs: abandon,
          });
          if (c.mode === "speculate") {
            expect(relevant).toBe(true);
            expect(budget).toBeGreaterThan(p99 + abandon);
            expect(c.reason).toBe("budget-exceeds-p99-plus-abandon-cost");
          } else if (c.mode === "synchronous") {
            expect(budget).toBeGreaterThan(p50);
            if (relevant) {
              expect(budget).toBeLessThanOrEqual(p99 + abandon);
              expect(c.reason).toBe("budget-between-p50-and-p99-plus-abandon-cost");
            } else expect(c.reason).toBe("not-decision-relevant");
          } else {
            expect(budget).toBeLessThanOrEqual(p50);
            expect(c.reason).toBe("budget-at-or-below-p50");
          }
        },
      ),
    );
  });

  it("never moves to a more cautious mode when the budget grows", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 100 }),
        fc.boolean(),
        (budget, more, a, b, abandon, relevant) => {
          const [p50, p99] = a <= b ? [a, b] : [b, a];
          const lo = classify(budget, p50, p99, abandon, relevant).mode;
          const hi = classify(budget + more, p50, p99, abandon, relevant).mode;
          expect(ORDER[hi]).toBeGreaterThanOrEqual(ORDER[lo]);
        },
      ),
    );
  });

  it("uses strict inequalities at both boundaries", () => {
    // budget == p99 + abandon is not speculate
    expect(classify(345, 22, 340, 5, true).mode).toBe("synchronous");
    expect(classify(345.5, 22, 340, 5, true).mode).toBe("speculate");
    expect(classify(340, 22, 340, 0, true).mode).toBe("synchronous");
    // budget == p50 is degrade, relevant or not
    expect(classify(22, 22, 340, 5, true)).toMatchObject({
      mode: "degrade",
      reason: "budget-at-or-below-p50",
    });
    expect(classify(22, 22, 340, 5, false)).toMatchObject({
      mode: "degrade",
      reason: "budget-at-or-below-p50",
    });
    expect(classify(22.5, 22, 340, 5, true).mode).toBe("synchronous");
    // p50 == p99 == budget: degrade; one above: speculate with no abandon cost
    expect(classify(10, 10, 10, 0, true).mode).toBe("degrade");
    expect(classify(11, 10, 10, 0, true).mode).toBe("speculate");
  });

  it("reproduces the founding note's observed case: a 90 ms budget against p50 22 / p99 340 is synchronous", () => {
    expect(classify(90, 22, 340, 0, true)).toEqual({
      mode: "synchronous",
      reason: "budget-between-p50-and-p99-plus-abandon-cost",
      budgetMs: 90,
      fanoutP50Ms: 22,
      fanoutP99Ms: 340,
      abandonCostMs: 0,
      relevant: true,
    });
  });

  it("is synchronous above p50 and degrades at or below it when not decision-relevant", () => {
    expect(classify(1000, 22, 340, 5, false)).toMatchObject({
      mode: "synchronous",
      reason: "not-decision-relevant",
    });
    expect(classify(10, 22, 340, 5, false).mode).toBe("degrade");
  });
});

describe("classify violations", () => {
  it("throws non-positive-budget for every budget <= 0, before looking at the estimate", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant(0),
          fc.constant(-0),
          fc.double({ min: -1e6, max: -Number.MIN_VALUE, noNaN: true }),
        ),
        ms,
        ms,
        ms,
        fc.boolean(),
        (budget, p50, p99, abandon, relevant) => {
          try {
            classify(budget, p50, p99, abandon, relevant);
            expect.unreachable("no violation");
          } catch (err) {
            expect(err).toBeInstanceOf(SpeculationBudgetViolation);
            const v = err as SpeculationBudgetViolation;
            expect(v.code).toBe("SPECULATION_BUDGET_VIOLATION");
            expect(v.kind).toBe("non-positive-budget");
            expect(v).toMatchObject({ budgetMs: budget, p50Ms: p50, p99Ms: p99 });
            expect(TailswarmError.is(v, "SPECULATION_BUDGET_VIOLATION")).toBe(true);
          }
        },
      ),
    );
  });

  it("throws p99-below-p50 when the estimate is corrupt, relevant or not", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 1, max: 500 }),
        fc.boolean(),
        (budget, p99, gap, relevant) => {
          const err = catchError(() => classify(budget, p99 + gap, p99, 0, relevant));
          expect(err).toBeInstanceOf(SpeculationBudgetViolation);
          expect((err as SpeculationBudgetViolation).kind).toBe("p99-below-p50");
        },
      ),
    );
  });

  it("names the numbers in the message, like the founding note", () => {
    expect(catchError(() => classify(0, 22, 340, 0, true))?.message).toMatch(
      /negative or zero budget \(budgetMs = 0 ms/,
    );
    expect(catchError(() => classify(90, 400, 340, 0, true))?.message).toMatch(
      /p99 \(340 ms\) < p50 \(400 ms\)/,
    );
  });

  it("rejects NaN, infinities and negative latencies as INVALID_ARGUMENT naming the field", () => {
    const cases: [number, number, number, number, string][] = [
      [NaN, 1, 2, 0, "budgetMs"],
      [Infinity, 1, 2, 0, "budgetMs"],
      [10, NaN, 2, 0, "fanoutP50Ms"],
      [10, -1, 2, 0, "fanoutP50Ms"],
      [10, 1, Infinity, 0, "fanoutP99Ms"],
      [10, 1, 2, -1, "abandonCostMs"],
      [10, 1, 2, NaN, "abandonCostMs"],
    ];
    for (const [b, p50, p99, a, field] of cases) {
      const err = catchError(() => classify(b, p50, p99, a, true));
      expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
      expect(err?.message).toContain(field);
      expect(err).not.toBeInstanceOf(SpeculationBudgetViolation);
    }
  });
});

function catchError(fn: () => unknown): Error | undefined {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  return undefined;
}
