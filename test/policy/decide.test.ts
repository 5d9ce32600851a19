import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import type { FanoutEstimate } from "../../src/estimate/types.js";
import { classify } from "../../src/policy/classify.js";
import { decide } from "../../src/policy/decide.js";
import type { DecideInput } from "../../src/policy/decide.js";
import { describeClassification } from "../../src/policy/describe.js";
import { REASONS } from "../../src/policy/reasons.js";
import { isPolicyName, POLICY_NAMES } from "../../src/policy/types.js";
import type { Classification, PolicyName, Reason } from "../../src/policy/types.js";
import { SpeculationBudgetViolation, violationOf } from "../../src/policy/violation.js";

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

/** `decide` with every other fact neutral: peers live, speculation feasible, a fallback to degrade to. */
function decideWith(
  policy: PolicyName,
  budgetMs: number,
  e: FanoutEstimate,
  abandonCostMs: number,
  relevant: boolean,
  facts: Partial<Pick<DecideInput, "speculationFeasible" | "anyPeerLive" | "hasFallback">> = {},
): Classification {
  return decide({
    policy,
    budgetMs,
    estimate: e,
    abandonCostMs,
    relevant,
    speculationFeasible: true,
    anyPeerLive: true,
    hasFallback: true,
    ...facts,
  });
}

/** The rule (`p99-boundary`); `hasFallback: false` makes its violations throw, as `classify`'s do. */
function rule(budgetMs: number, e: FanoutEstimate, abandonCostMs: number, relevant: boolean): Classification {
  return decideWith("p99-boundary", budgetMs, e, abandonCostMs, relevant);
}

describe("decide, p99-boundary (the rule)", () => {
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
          expect(rule(budget, estimate(p50, p99), abandon, relevant)).toEqual({
            ...classify(budget, p50, p99, abandon, relevant),
            policy: "p99-boundary",
          });
        },
      ),
    );
  });

  it("turns classify's violations into a degrade under the violation's reason when there is a fallback", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -20, max: 600 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 50 }),
        fc.boolean(),
        (budget, p50, p99, abandon, relevant) => {
          const c = rule(budget, estimate(p50, p99), abandon, relevant);
          let expected: Classification;
          try {
            expected = classify(budget, p50, p99, abandon, relevant);
          } catch (err) {
            expect(err).toBeInstanceOf(SpeculationBudgetViolation);
            const kind = (err as SpeculationBudgetViolation).kind;
            expect(c).toMatchObject({ mode: "degrade", reason: kind });
            expect(violationOf(c)).toMatchObject({ kind, message: (err as Error).message });
            return;
          }
          expect(c).toEqual({ ...expected, policy: "p99-boundary" });
          expect(violationOf(c)).toBeUndefined();
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
          const plain = rule(budget, estimate(p50, p99, "unknown"), 0, relevant);
          // a p50 from too few samples is no ground to degrade on: synchronous, which samples
          expect(plain).toMatchObject({ mode: "synchronous", reason: "estimate-unknown" });
          // nor is an unknown estimate's own lower-bound p50, at its horizon or not (a product of the
          // members' CDFs, it assumes their independence): only its floor is
          const cut: FanoutEstimate = {
            ...estimate(p50, p99, "unknown"),
            p50Kind: "lower-bound",
            p99Kind: "lower-bound",
            horizonMs: Number.isNaN(p50) ? Infinity : p50,
          };
          expect(rule(budget, cut, 0, relevant)).toMatchObject({
            mode: "synchronous",
            reason: "estimate-unknown",
          });
          const floored = rule(budget, { ...cut, p50FloorMs: budget }, 0, relevant);
          expect(floored).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50" });
        },
      ),
    );
  });

  it("degrades an unknown estimate at or below its p50 floor, and reports that floor", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.oneof(fc.constant(NaN), fc.integer({ min: 0, max: 300 })),
        fc.boolean(),
        (budget, floor, p50, relevant) => {
          const e: FanoutEstimate = { ...estimate(p50, NaN, "unknown"), p50FloorMs: floor };
          const c = rule(budget, e, 0, relevant);
          if (budget <= floor) {
            // the p50 it reports is the floor it degraded on, a lower bound: the inequality holds as printed
            expect(c).toMatchObject({
              mode: "degrade",
              reason: "budget-at-or-below-p50",
              fanoutP50Ms: floor,
            });
            expect(c.fanoutP50Kind).toBe("lower-bound");
          } else {
            expect(c).toMatchObject({ mode: "synchronous", reason: "estimate-unknown" });
            expect(Object.is(c.fanoutP50Ms, p50)).toBe(true);
          }
          // naive-p50 reads the p50 it is given, never the floor
          const naive = decideWith("naive-p50", budget, e, 0, relevant);
          expect(Object.is(naive.fanoutP50Ms, p50)).toBe(true);
        },
      ),
    );
  });

  it("still raises violations on an unknown estimate when the numbers show them", () => {
    const noFallback = { hasFallback: false };
    expect(() => decideWith("p99-boundary", 0, estimate(NaN, NaN, "unknown"), 0, true, noFallback)).toThrow(
      SpeculationBudgetViolation,
    );
    expect(() => decideWith("p99-boundary", 90, estimate(400, 340, "unknown"), 0, true, noFallback)).toThrow(
      /p99 \(340 ms\) < p50/,
    );
    expect(rule(0, estimate(NaN, NaN, "unknown"), 0, true)).toMatchObject({
      mode: "degrade",
      reason: "non-positive-budget",
    });
    expect(rule(90, estimate(400, 340, "unknown"), 0, true)).toMatchObject({
      mode: "degrade",
      reason: "p99-below-p50",
    });
  });

  it("rejects a fresh estimate without numbers", () => {
    const err = catchError(() => rule(90, estimate(NaN, 340), 0, true));
    expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
  });

  it("does not speculate when the router judged a chosen peer infeasible, and says so", () => {
    expect(decideWith("p99-boundary", 400, seedCase, 5, true, { speculationFeasible: false })).toMatchObject({
      mode: "synchronous",
      reason: "speculation-infeasible-peer",
      budgetMs: 400,
      fanoutP99Ms: 340,
      abandonCostMs: 5,
    });
    // where the rule would not speculate anyway, its own reason stands
    expect(decideWith("p99-boundary", 90, seedCase, 5, true, { speculationFeasible: false }).reason).toBe(
      "budget-between-p50-and-p99-plus-abandon-cost",
    );
  });

  it("without a fallback, a degrade at or below p50 is the founding note's violation", () => {
    const err = catchError(() => decideWith("p99-boundary", 20, seedCase, 0, true, { hasFallback: false }));
    expect(err).toBeInstanceOf(SpeculationBudgetViolation);
    expect(err).toMatchObject({ kind: "budget-at-or-below-p50", budgetMs: 20, p50Ms: 22, p99Ms: 340 });
    expect(err?.message).toMatch(/budget 20 ms <= p50 22 ms/);
  });
});

describe("decide, p99-boundary on lower bounds", () => {
  const lb = (p50Ms: number, p99Ms: number, p50Kind: "known" | "lower-bound" = "known"): FanoutEstimate => ({
    ...estimate(p50Ms, p99Ms),
    p50Kind,
    p99Kind: "lower-bound",
  });

  it("never speculates on a lower bound, whatever the numbers, the cost and the relevance", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        fc.double({ min: 0, max: 1e3, noNaN: true }),
        fc.boolean(),
        fc.boolean(),
        (budget, a, b, cost, relevant, p50Bound) => {
          const [p50, p99] = a <= b ? [a, b] : [b, a];
          const c = rule(budget, lb(p50, p99, p50Bound ? "lower-bound" : "known"), cost, relevant);
          expect(c.mode).not.toBe("speculate");
          // a lower-bound median at or above the budget degrades: the true median is at least that
          if (budget <= p50) expect(c.mode).toBe("degrade");
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("names what it knows: a tail not seen, a median not seen, a median that does not fit", () => {
    expect(rule(400, lb(22, 87), 5, true)).toMatchObject({
      mode: "synchronous",
      reason: "p99-lower-bound",
      fanoutP99Kind: "lower-bound",
    });
    expect(rule(60, lb(22, 87), 5, true).reason).toBe("budget-between-p50-and-p99-plus-abandon-cost");
    expect(rule(6, lb(6.5, 6.5, "lower-bound"), 0, true)).toMatchObject({
      mode: "degrade",
      reason: "budget-at-or-below-p50",
    });
    expect(rule(90, lb(87, 87, "lower-bound"), 0, true)).toMatchObject({
      mode: "synchronous",
      reason: "p50-lower-bound",
    });
    // the answers cannot change the action: synchronous as before, nothing to speculate for
    expect(rule(400, lb(22, 87), 5, false).reason).toBe("not-decision-relevant");
  });

  it("says which number is a lower bound in the inequality", () => {
    const account = (c: Classification): string => describeClassification(c).inequality;
    expect(account(rule(400, lb(22, 87), 5, true))).toBe(
      "p50 22 ms < budget 400 ms > p99 (lower bound) 87 ms + abandon cost 5 ms = 92 ms, but the true p99 is at least that, possibly more: the tail is not known to fit",
    );
    expect(account(rule(10, lb(12, 12, "lower-bound"), 0, true))).toBe(
      "budget 10 ms <= p50 (lower bound) 12 ms",
    );
    expect(account(rule(90, lb(87, 87, "lower-bound"), 0, true))).toBe(
      "budget 90 ms > p50 (lower bound) 87 ms, but the true p50 is at least that, possibly more: neither the median nor the tail is known to fit",
    );
  });

  it("rejects a kind it does not know", () => {
    const bad = { ...seedCase, p99Kind: "upper-bound" } as unknown as FanoutEstimate;
    const err = catchError(() => rule(90, bad, 0, true));
    expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
    expect(err?.message).toMatch(/^estimate\.p99Kind: got "upper-bound"/);
  });
});

describe("decide, every policy", () => {
  it("lists its policies", () => {
    expect(POLICY_NAMES).toEqual(["p99-boundary", "naive-p50", "always-sync", "never"]);
    expect(isPolicyName("naive-p50")).toBe(true);
    expect(isPolicyName("p50")).toBe(false);
  });

  it("p99-boundary is the rule", () => {
    expect(decideWith("p99-boundary", 90, seedCase, 0, true)).toEqual({
      ...classify(90, 22, 340, 0, true),
      policy: "p99-boundary",
    });
    expect(decideWith("p99-boundary", 400, seedCase, 5, true).mode).toBe("speculate");
  });

  it("naive-p50 reproduces the founding note's failure: speculates whenever budget > p50", () => {
    expect(decideWith("naive-p50", 90, seedCase, 50, false)).toMatchObject({
      mode: "speculate",
      reason: "naive-budget-exceeds-p50",
    });
    expect(decideWith("naive-p50", 22, seedCase, 0, true)).toMatchObject({
      mode: "degrade",
      reason: "budget-at-or-below-p50",
    });
    // it ignores freshness when it has a p50, and goes synchronous when it has none
    expect(decideWith("naive-p50", 90, estimate(22, NaN, "unknown"), 0, true).mode).toBe("speculate");
    expect(decideWith("naive-p50", 90, estimate(NaN, NaN, "unknown"), 0, true).reason).toBe(
      "estimate-unknown",
    );
    // and a router's judgement of infeasibility stops it too
    expect(decideWith("naive-p50", 90, seedCase, 0, true, { speculationFeasible: false })).toMatchObject({
      mode: "synchronous",
      reason: "speculation-infeasible-peer",
    });
  });

  it("always-sync and never ignore the estimate", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 500 }), (budget, p50) => {
        const e = estimate(p50, p50 + 10);
        expect(decideWith("always-sync", budget, e, 0, true)).toMatchObject({
          mode: "synchronous",
          reason: "policy-always-sync",
        });
        expect(decideWith("never", budget, e, 0, true)).toMatchObject({
          mode: "degrade",
          reason: "policy-never",
        });
      }),
    );
  });

  it("every policy that fans out refuses a spent budget; never does not fan out", () => {
    for (const policy of ["p99-boundary", "naive-p50", "always-sync"] as const) {
      const err = catchError(() => decideWith(policy, 0, seedCase, 0, true, { hasFallback: false }));
      expect(err).toBeInstanceOf(SpeculationBudgetViolation);
      expect((err as SpeculationBudgetViolation).kind).toBe("non-positive-budget");
      expect(decideWith(policy, 0, seedCase, 0, true)).toMatchObject({
        mode: "degrade",
        reason: "non-positive-budget",
      });
    }
    expect(decideWith("never", -5, seedCase, 0, true).mode).toBe("degrade");
  });

  it("with no live peer degrades, whatever the policy", () => {
    for (const policy of POLICY_NAMES) {
      expect(decideWith(policy, 500, seedCase, 0, true, { anyPeerLive: false })).toMatchObject({
        mode: "degrade",
        reason: "no-live-peers",
      });
    }
  });

  it("a degrade that is not a budget violation, with nothing to degrade to, is a bad argument", () => {
    for (const facts of [{ anyPeerLive: false }, {}]) {
      const err = catchError(() =>
        decideWith(facts.anyPeerLive === false ? "p99-boundary" : "never", 500, seedCase, 0, true, {
          ...facts,
          hasFallback: false,
        }),
      );
      expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
      expect(err).not.toBeInstanceOf(SpeculationBudgetViolation);
      expect(err?.message).toMatch(/^hasFallback: got false, expected a local\/cached decision/);
    }
  });

  it("rejects an unknown policy name, naming it", () => {
    const err = catchError(() => decideWith("sometimes" as never, 90, seedCase, 0, true));
    expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
    expect(err?.message).toContain('"sometimes"');
  });
});

/** A degrade of the rule on an unknown estimate: on its p50 floor. */
function onFloor(i: DecideInput, c: Classification): boolean {
  return (
    c.reason === "budget-at-or-below-p50" && i.policy === "p99-boundary" && i.estimate.status === "unknown"
  );
}

/**
 * The condition each reason states (the README's rule table), written out here independently of the
 * code's table: for the input given and the numbers returned.
 */
function conditionHolds(i: DecideInput, c: Classification): boolean {
  const { budgetMs: b, fanoutP50Ms: p50, fanoutP99Ms: p99, abandonCostMs: cost, relevant } = c;
  const fresh = i.estimate.status === "fresh";
  const live = i.anyPeerLive;
  // what a lower bound claims: the true quantile is at least the number (the kind comes back with it;
  // a degrade on an unknown estimate's floor reports that floor, a lower bound)
  const floor = i.estimate.p50FloorMs;
  const onItsFloor = i.policy === "p99-boundary" && !fresh && floor !== undefined && 0 < b && b <= floor;
  if (onFloor(i, c)) expect(c).toMatchObject({ fanoutP50Ms: floor, fanoutP50Kind: "lower-bound" });
  else expect(c.fanoutP50Kind).toBe(i.estimate.p50Kind);
  expect(c.fanoutP99Kind).toBe(i.estimate.p99Kind);
  const p50Bound = c.fanoutP50Kind === "lower-bound";
  const p99Bound = c.fanoutP99Kind === "lower-bound";
  const ruleWouldSpeculate =
    i.policy === "p99-boundary" && fresh && relevant && !p50Bound && !p99Bound && b > p99 + cost;
  const naiveWouldSpeculate = i.policy === "naive-p50" && b > p50;
  switch (c.reason) {
    case "budget-exceeds-p99-plus-abandon-cost":
      return live && ruleWouldSpeculate && i.speculationFeasible;
    case "naive-budget-exceeds-p50":
      return live && naiveWouldSpeculate && i.speculationFeasible;
    case "speculation-infeasible-peer":
      return live && (ruleWouldSpeculate || naiveWouldSpeculate) && !i.speculationFeasible;
    case "budget-between-p50-and-p99-plus-abandon-cost":
      // a lower-bound p99 only raises the true tail: b <= p99 + cost holds for it a fortiori
      return live && fresh && relevant && !p50Bound && p50 < b && b <= p99 + cost;
    case "p99-lower-bound":
      return live && fresh && relevant && !p50Bound && p99Bound && p50 < b && b > p99 + cost;
    case "p50-lower-bound":
      return live && fresh && relevant && p50Bound && b > p50;
    case "not-decision-relevant":
      return live && fresh && !relevant && b > p50;
    case "estimate-unknown": {
      // the reply prints the floor the budget was above, or that there was none: both must be so
      const printed = describeClassification(c).inequality;
      if (c.p50FloorMs === undefined) {
        expect(printed).toMatch(/and no p50 floor$/);
        if (i.policy === "p99-boundary") expect(floor).toBeUndefined();
      } else {
        expect(printed).toContain(` > p50 floor `);
        expect(c.p50FloorMs).toBe(floor);
        expect(b).toBeGreaterThan(c.p50FloorMs);
      }
      return live && !fresh && !onItsFloor;
    }
    case "policy-always-sync":
      return live && i.policy === "always-sync" && b > 0;
    case "budget-at-or-below-p50":
      // the rule degrades an unknown estimate only on its floor
      return live && 0 < b && b <= p50 && (i.policy !== "p99-boundary" || fresh || onItsFloor);
    case "non-positive-budget":
      return live && b <= 0;
    case "p99-below-p50":
      return live && b > 0 && p99 < p50;
    case "policy-never":
      return live && i.policy === "never";
    case "no-live-peers":
      return !live;
  }
}

const budgetArb = fc.oneof(
  fc.integer({ min: -5, max: 60 }),
  fc.double({ min: -1e3, max: 1e6, noNaN: true, noDefaultInfinity: true }),
);
const msArb = fc.oneof(
  fc.integer({ min: 0, max: 50 }),
  fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
);
const unknownMsArb = fc.oneof(msArb, fc.constant(NaN), fc.constant(Infinity));
const kindArb = fc.constantFrom("known" as const, "lower-bound" as const, undefined);
/** p99 is a lower bound whenever p50 is (it is at least the p50); each kind may be left out (known). */
const kindsArb = fc
  .tuple(kindArb, kindArb)
  .map(([p50Kind, p99Kind]) => ({
    p50Kind,
    p99Kind: p50Kind === "lower-bound" ? ("lower-bound" as const) : p99Kind,
  }))
  .map(({ p50Kind, p99Kind }) => ({
    ...(p50Kind !== undefined && { p50Kind }),
    ...(p99Kind !== undefined && { p99Kind }),
  }));
const estimateArb: fc.Arbitrary<DecideInput["estimate"]> = fc.oneof(
  fc
    .tuple(fc.record({ status: fc.constant("fresh" as const), p50Ms: msArb, p99Ms: msArb }), kindsArb)
    .map(([e, k]) => ({ ...e, ...k })),
  fc
    .tuple(
      fc.record({ status: fc.constant("unknown" as const), p50Ms: unknownMsArb, p99Ms: unknownMsArb }),
      kindsArb,
      fc.option(msArb, { nil: undefined }),
    )
    .map(([e, k, floor]) => ({ ...e, ...k, ...(floor !== undefined && { p50FloorMs: floor }) })),
);
const inputArb: fc.Arbitrary<DecideInput> = fc.record({
  policy: fc.constantFrom(...POLICY_NAMES),
  budgetMs: budgetArb,
  estimate: estimateArb,
  abandonCostMs: msArb,
  relevant: fc.boolean(),
  speculationFeasible: fc.boolean(),
  anyPeerLive: fc.boolean(),
  hasFallback: fc.boolean(),
});

describe("decide's reasons are true", () => {
  it("for every input, the returned reason's condition holds for the returned numbers", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        let c: Classification;
        try {
          c = decide(input);
        } catch (err) {
          // only a degrade with nothing to degrade to throws; the same input with a fallback says which
          expect(input.hasFallback).toBe(false);
          const degrade = decide({ ...input, hasFallback: true });
          expect(degrade.mode).toBe("degrade");
          if (err instanceof SpeculationBudgetViolation) {
            expect(err.kind).toBe(degrade.reason);
            expect(err).toMatchObject({ budgetMs: input.budgetMs });
          } else {
            expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
            expect(["policy-never", "no-live-peers"]).toContain(degrade.reason);
          }
          return;
        }
        expect(c).toMatchObject({
          budgetMs: input.budgetMs,
          abandonCostMs: input.abandonCostMs,
          relevant: input.relevant,
        });
        // the p50 passes through, but for a degrade on an unknown estimate's floor, which reports it
        if (!onFloor(input, c)) expect(Object.is(c.fanoutP50Ms, input.estimate.p50Ms)).toBe(true);
        expect(Object.is(c.fanoutP99Ms, input.estimate.p99Ms)).toBe(true);
        expect(c.mode).toBe(REASONS[c.reason].mode);
        expect(conditionHolds(input, c)).toBe(true);
        if (c.mode === "degrade") expect(input.hasFallback).toBe(true);
        if (c.mode === "speculate") {
          expect(input.speculationFeasible && input.anyPeerLive).toBe(true);
          expect(c.budgetMs).toBeGreaterThan(c.fanoutP50Ms);
          if (input.policy === "p99-boundary") {
            expect(input.estimate.status).toBe("fresh");
            expect(input.estimate.p50Kind).not.toBe("lower-bound");
            expect(input.estimate.p99Kind).not.toBe("lower-bound");
            expect(c.budgetMs).toBeGreaterThan(c.fanoutP99Ms + c.abandonCostMs);
          }
        }
      }),
      { numRuns: 5000 },
    );
  });

  it("every reason in the table can be given", () => {
    const seen = new Set<Reason>();
    fc.assert(
      fc.property(inputArb, (input) => {
        try {
          seen.add(decide({ ...input, hasFallback: true }).reason);
        } catch {
          // INVALID_ARGUMENT cannot happen here: the arbitraries give valid inputs
        }
      }),
      { numRuns: 5000 },
    );
    // the rule's own reasons on a live set, so that the rarer lower-bound cases come up every run
    fc.assert(
      fc.property(inputArb, (input) => {
        try {
          seen.add(decide({ ...input, policy: "p99-boundary", anyPeerLive: true, hasFallback: true }).reason);
        } catch {
          // as above
        }
      }),
      { numRuns: 10_000 },
    );
    expect([...seen].sort()).toEqual(Object.keys(REASONS).sort());
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

  it("states the router's infeasibility, the violations and the missing peers with their numbers", () => {
    const account = (c: Classification): string => describeClassification(c).inequality;
    expect(account(decideWith("p99-boundary", 400, seedCase, 5, true, { speculationFeasible: false }))).toBe(
      "a chosen peer is not speculation-feasible (fresh p99 > budget 400 ms, or unknown), although budget 400 ms > p99 340 ms + abandon cost 5 ms = 345 ms",
    );
    expect(account(decideWith("naive-p50", 90, seedCase, 5, true, { speculationFeasible: false }))).toBe(
      "a chosen peer is not speculation-feasible (fresh p99 > budget 90 ms, or unknown), although budget 90 ms > p50 22 ms",
    );
    expect(account(decideWith("p99-boundary", -3, seedCase, 5, true))).toBe("budget -3 ms <= 0");
    expect(account(decideWith("p99-boundary", 90, estimate(50, 20), 5, true))).toBe("p99 20 ms < p50 50 ms");
    expect(account(decideWith("always-sync", 90, seedCase, 5, true, { anyPeerLive: false }))).toBe(
      "no live peer to fan out to",
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
