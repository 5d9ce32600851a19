import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import type { FanoutEstimate } from "../../src/estimate/types.js";
import { classify, classifyEstimate } from "../../src/policy/classify.js";
import { decideMode, isPolicyName, POLICY_NAMES } from "../../src/policy/decide-mode.js";
import { describeClassification } from "../../src/policy/describe.js";
import { SpeculationBudgetViolation } from "../../src/policy/violation.js";

function estimate(p50Ms: number, p99Ms: number, status: "fresh" | "unknown" = "fresh"): FanoutEstimate {
  return {
    status,
    unknownPeers: status === "unknown" ? ["p1"] : [],
    p50Ms,
    p99Ms,
    requirement: { kind: "all" },
    size: 40,
    maxAgeMs: 100,
    minSamples: status === "unknown" ? 3 : 200,
  };
}

const seedCase = estimate(22, 340);

describe("classifyEstimate", () => {
  it("is classify for a fresh estimate", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 50 }),
        fc.boolean(),
        (budget, a, b, abandon, relevant) => {
          const [p50, p99] = a <= b ? [a, b] : [b, a];
          expect(classifyEstimate(budget, estimate(p50, p99), abandon, relevant)).toEqual(
            classify(budget, p50, p99, abandon, relevant),
          );
        },
      ),
    );
  });

  it("never speculates on an unknown estimate, whatever its numbers", () => {
    const maybe = fc.oneof(fc.constant(NaN), fc.constant(Infinity), fc.integer({ min: 0, max: 300 }));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        maybe,
        maybe,
        fc.boolean(),
        (budget, p50, p99, relevant) => {
          fc.pre(!(p99 < p50));
          const c = classifyEstimate(budget, estimate(p50, p99, "unknown"), 0, relevant);
          expect(c.mode).not.toBe("speculate");
          if (budget <= p50) expect(c).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50" });
          else expect(c).toMatchObject({ mode: "synchronous", reason: "estimate-unknown" });
        },
      ),
    );
  });

  it("still raises violations on an unknown estimate when the numbers show them", () => {
    expect(() => classifyEstimate(0, estimate(NaN, NaN, "unknown"), 0, true)).toThrow(
      SpeculationBudgetViolation,
    );
    expect(() => classifyEstimate(90, estimate(400, 340, "unknown"), 0, true)).toThrow(
      /p99 \(340 ms\) < p50/,
    );
  });

  it("rejects a fresh estimate without numbers", () => {
    const err = catchError(() => classifyEstimate(90, estimate(NaN, 340), 0, true));
    expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
  });
});

describe("decideMode", () => {
  it("lists its policies", () => {
    expect(POLICY_NAMES).toEqual(["p99-boundary", "naive-p50", "always-sync", "never"]);
    expect(isPolicyName("naive-p50")).toBe(true);
    expect(isPolicyName("p50")).toBe(false);
  });

  it("p99-boundary is the rule", () => {
    expect(decideMode("p99-boundary", 90, seedCase, 0, true)).toEqual(
      classifyEstimate(90, seedCase, 0, true),
    );
    expect(decideMode("p99-boundary", 400, seedCase, 5, true).mode).toBe("speculate");
  });

  it("naive-p50 reproduces the seed's failure: speculates whenever budget > p50", () => {
    expect(decideMode("naive-p50", 90, seedCase, 50, false)).toMatchObject({
      mode: "speculate",
      reason: "naive-budget-exceeds-p50",
    });
    expect(decideMode("naive-p50", 22, seedCase, 0, true)).toMatchObject({
      mode: "degrade",
      reason: "budget-at-or-below-p50",
    });
    // it ignores freshness when it has a p50, and goes synchronous when it has none
    expect(decideMode("naive-p50", 90, estimate(22, NaN, "unknown"), 0, true).mode).toBe("speculate");
    expect(decideMode("naive-p50", 90, estimate(NaN, NaN, "unknown"), 0, true).reason).toBe(
      "estimate-unknown",
    );
  });

  it("always-sync and never ignore the estimate", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 500 }), (budget, p50) => {
        const e = estimate(p50, p50 + 10);
        expect(decideMode("always-sync", budget, e, 0, true)).toMatchObject({
          mode: "synchronous",
          reason: "policy-always-sync",
        });
        expect(decideMode("never", budget, e, 0, true)).toMatchObject({
          mode: "degrade",
          reason: "policy-never",
        });
      }),
    );
  });

  it("every policy that fans out refuses a spent budget; never does not fan out", () => {
    for (const policy of ["p99-boundary", "naive-p50", "always-sync"] as const) {
      const err = catchError(() => decideMode(policy, 0, seedCase, 0, true));
      expect(err).toBeInstanceOf(SpeculationBudgetViolation);
      expect((err as SpeculationBudgetViolation).kind).toBe("non-positive-budget");
    }
    expect(decideMode("never", -5, seedCase, 0, true).mode).toBe("degrade");
  });

  it("rejects an unknown policy name, naming it", () => {
    const err = catchError(() => decideMode("sometimes" as never, 90, seedCase, 0, true));
    expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
    expect(err?.message).toContain('"sometimes"');
  });
});

describe("describeClassification", () => {
  it("states the inequality that decided, with the numbers", () => {
    expect(describeClassification(classify(400, 22, 340, 5, true)).inequality).toBe(
      "budget 400 ms > p99 340 ms + abandon cost 5 ms = 345 ms",
    );
    expect(describeClassification(classify(90, 22, 340, 5, true)).inequality).toBe(
      "p50 22 ms < budget 90 ms <= p99 340 ms + abandon cost 5 ms = 345 ms",
    );
    expect(describeClassification(classify(22, 22, 340, 5, true)).inequality).toBe(
      "budget 22 ms <= p50 22 ms",
    );
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
