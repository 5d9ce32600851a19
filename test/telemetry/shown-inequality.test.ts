import { describe, expect, it } from "vitest";
import { classify } from "../../src/policy/classify.js";
import { decide } from "../../src/policy/decide.js";
import { shownInequality } from "../../src/telemetry/shown-inequality.js";

describe("shownInequality", () => {
  it("rounds to 0.1 ms", () => {
    expect(shownInequality(classify(128.8349, 54.2711, 194.3018, 0, true))).toBe(
      "p50 54.3 ms < budget 128.8 ms <= p99 194.3 ms + abandon cost 0 ms = 194.3 ms",
    );
  });

  it("keeps two different numbers different: finer where 0.1 ms would make them equal", () => {
    expect(shownInequality(classify(90.04, 10, 90.01, 0, true))).toBe(
      "budget 90.04 ms > p99 90.01 ms + abandon cost 0 ms = 90.01 ms",
    );
  });

  it("shows no binary noise in a sum, and 'unknown' for a missing number", () => {
    expect(shownInequality(classify(1000, 0.05, 0.1, 0.2, true))).toBe(
      "budget 1000 ms > p99 0.1 ms + abandon cost 0.2 ms = 0.3 ms",
    );
    const unknown = {
      ...classify(500, 10, 20, 0, true),
      reason: "naive-budget-exceeds-p50",
      mode: "speculate",
      fanoutP50Ms: NaN,
    } as const;
    expect(shownInequality(unknown)).toContain("p50 unknown");
  });

  it("rounds the p50 floor an unknown estimate was weighed against, as it does the other numbers", () => {
    const c = decide({
      policy: "p99-boundary",
      budgetMs: 9.87654,
      estimate: {
        status: "unknown",
        p50Ms: 9.3,
        p99Ms: 80,
        p50Kind: "lower-bound",
        p99Kind: "lower-bound",
        p50FloorMs: 9.47213,
      },
      abandonCostMs: 0,
      relevant: true,
      speculationFeasible: true,
      anyPeerLive: true,
      hasFallback: true,
    });
    expect(c.reason).toBe("estimate-unknown");
    expect(shownInequality(c)).toBe(
      "fan-out estimate unknown (stale or under-sampled) and budget 9.9 ms > p50 floor 9.5 ms",
    );
  });
});
