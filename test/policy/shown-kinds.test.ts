/** What the reply, the fan-out span and the flight recorder show beside a decision's p50 and p99. */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/policy/decide.js";
import { describeClassification } from "../../src/policy/describe.js";
import { shownKinds } from "../../src/policy/shown-kinds.js";
import type { FanoutEstimate } from "../../src/estimate/types.js";

const unknown: FanoutEstimate = {
  status: "unknown",
  unknownPeers: ["thin"],
  p50Ms: 9.3,
  p99Ms: 80,
  p50Kind: "lower-bound",
  p99Kind: "lower-bound",
  requirement: { kind: "all" },
  size: 40,
  maxAgeMs: 100,
  minSamples: 3,
  p50FloorMs: 41,
};
const decideOn = (budgetMs: number, estimate: FanoutEstimate) =>
  decide({
    policy: "p99-boundary",
    budgetMs,
    estimate,
    abandonCostMs: 0,
    relevant: true,
    speculationFeasible: true,
    anyPeerLive: true,
    hasFallback: true,
  });

describe("shownKinds", () => {
  it("shows the floor an unknown estimate was degraded on as a lower bound, and its own quantiles as unknown", () => {
    const c = decideOn(10, unknown);
    expect(c).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50", fanoutP50Ms: 41 });
    expect(shownKinds(c, unknown)).toEqual({ p50: "lower-bound", p99: "unknown" });
    // a budget past the floor: synchronous, and the estimate's p50 as it is, unknown
    const s = decideOn(50, unknown);
    expect(s).toMatchObject({ mode: "synchronous", reason: "estimate-unknown", fanoutP50Ms: 9.3 });
    expect(shownKinds(s, unknown)).toEqual({ p50: "unknown", p99: "unknown" });
    // its reason prints the floor the budget was above, not the estimate's own p50
    expect(describeClassification(s).inequality).toBe(
      "fan-out estimate unknown (stale or under-sampled) and budget 50 ms > p50 floor 41 ms",
    );
  });

  it("shows an unknown estimate's own lower-bound p50 as unknown: it is not degraded on", () => {
    const { p50FloorMs: _, ...censored } = { ...unknown, horizonMs: 9 };
    const c = decideOn(9, censored);
    expect(c).toMatchObject({ mode: "synchronous", reason: "estimate-unknown", fanoutP50Ms: 9.3 });
    expect(shownKinds(c, censored)).toEqual({ p50: "unknown", p99: "unknown" });
    // which reads true: the budget is not weighed against that p50, and there is no floor
    expect(describeClassification(c).inequality).toBe(
      "fan-out estimate unknown (stale or under-sampled) and no p50 floor",
    );
  });

  it("shows a fresh estimate's own kinds", () => {
    const fresh: FanoutEstimate = { ...unknown, status: "fresh", unknownPeers: [], p50Kind: "known" };
    const c = decideOn(10, fresh);
    expect(c.fanoutP50Ms).toBe(9.3); // the floor is for unknown estimates only
    expect(shownKinds(c, fresh)).toEqual({ p50: "known", p99: "lower-bound" });
  });
});
