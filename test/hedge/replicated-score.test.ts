/** Scoring of the replicated scenario: quantiles with misses as lower bounds, late replies apart, the goal. */
import { describe, expect, it } from "vitest";
import type { HedgePolicyName } from "../../src/hedge/types.js";
import { scoreBudget } from "../../src/testbed/replicated/score.js";
import type { ReplicatedCall } from "../../src/testbed/replicated/score.js";

const POLICIES: HedgePolicyName[] = ["gated", "none", "fixed-delay", "percentile", "p95"];

function call(policy: HedgePolicyName, request: number, latencyMs: number, o: Partial<ReplicatedCall> = {}) {
  const c: ReplicatedCall = {
    coordinator: "budget-400",
    request,
    budgetMs: 400,
    policy,
    code: "OK",
    latencyMs,
    missed: false,
    primaries: 1,
    backups: 0,
    backupsWon: 0,
    unlandable: 0,
    cutWorkMs: 0,
    refused: {},
    refusedBackupP99Ms: [],
    ...o,
  };
  return c;
}

/** 100 requests per policy; the slowest `tail` of none's are `slow` ms, each policy's own tail given. */
function stream(tailOf: Record<string, number>, backupsOf: Record<string, number>): ReplicatedCall[] {
  const out: ReplicatedCall[] = [];
  for (const p of POLICIES)
    for (let i = 0; i < 100; i++)
      out.push(call(p, i, i >= 98 ? tailOf[p]! : 40 + (i % 10), { backups: i < backupsOf[p]! ? 1 : 0 }));
  return out;
}

describe("scoreBudget", () => {
  it("meets the goal when gated cuts p99 as far as the best baseline at no more than half its extra load", () => {
    const calls = stream(
      { gated: 100, none: 300, "fixed-delay": 100, percentile: 200, p95: 150 },
      { gated: 5, none: 0, "fixed-delay": 20, percentile: 5, p95: 6 },
    );
    const b = scoreBudget(calls, 400, POLICIES, 250);
    expect(b.below_replica_p99).toBe(false);
    expect(b.policies.none!.p99_ms).toBe(300);
    expect(b.goal).toMatchObject({ best_baseline: "fixed-delay", met: true });
    expect(b.goal.p99_cut_ms).toMatchObject({ gated: 200, "fixed-delay": 200 });
  });

  it("does not meet it at more than half the best baseline's extra load", () => {
    const calls = stream(
      { gated: 100, none: 300, "fixed-delay": 100, percentile: 200, p95: 150 },
      { gated: 11, none: 0, "fixed-delay": 20, percentile: 5, p95: 6 },
    );
    const b = scoreBudget(calls, 400, POLICIES, 250);
    expect(b.goal.met).toBe(false);
    expect(b.goal.because).toContain("above half of fixed-delay's");
  });

  it("reads no cut from a p99 that is only a lower bound, and leaves late replies out of answered_by_all", () => {
    const calls = stream(
      { gated: 100, none: 300, "fixed-delay": 100, percentile: 200, p95: 150 },
      { gated: 1, none: 0, "fixed-delay": 20, percentile: 5, p95: 6 },
    ).map((c) => (c.policy === "none" && c.request >= 98 ? { ...c, latencyMs: 400, missed: true } : c));
    // request 5 came back late under every policy (a gRPC error): out of answered_by_all
    const late = calls.map((c) =>
      c.request === 5 ? { ...c, code: "DEADLINE_EXCEEDED", missed: true, latencyMs: 400 } : c,
    );
    const b = scoreBudget(late, 400, POLICIES, 250);
    expect(b.policies.none!.p99_is_lower_bound).toBe(true);
    expect(b.policies.none!.errors).toBe(1);
    expect(b.policies.none!.answered_by_all.requests).toBe(99);
    expect(b.goal.met).toBeNull();
    expect(b.goal.because).toContain("the p99 of none is only a lower bound");
    const gatedVsNone = b.gated_versus.find((v) => v.baseline === "none")!;
    expect(gatedVsNone.latency_ms!.pairs).toBe(100);
    expect(gatedVsNone.latency_ms!.mean).toBe(-6); // two requests 300 ms faster, over 100 pairs
  });
});
