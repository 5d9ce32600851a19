/**
 * A short agentic-context run over real gRPC on loopback (peers served in this process): memory-aware
 * routing finds the peers that hold a request's context, so MABP's hit ratio is higher and its work per
 * request lower than JSQ's and random's on the same stream. Only those two orderings are asserted: the
 * latency figures depend on the machine's load.
 */
import { describe, expect, it } from "vitest";
import { agenticScenarioFrom } from "../../src/testbed/routing/agentic-scenario.js";
import { runAgentic } from "../../src/testbed/routing/run-agentic.js";

describe("agentic-context (short live run)", () => {
  it("MABP beats JSQ and random on hit ratio and work per request", async () => {
    const scenario = agenticScenarioFrom({
      seed: 3,
      warmupS: 1,
      durationS: 2,
      ratePerS: 40,
      sloMs: 300,
      budgetMs: 1500,
      capacities: [1, 1, 2, 2],
      maxBacklogPerSlot: 8,
      nu: 1,
      worker: { unitMs: 20, missFactor: 4, verifyWork: 2, memoryBudget: 6, retention: "lru" },
      classes: [
        { name: "rag", share: 0.5, contexts: 30 },
        { name: "agent", share: 0.5, contexts: 30 },
      ],
      policies: ["random", "jsq", "mabp"],
      processes: false,
    });
    const report = await runAgentic(scenario);
    const row = (p: string) => report.rows.find((r) => r.policy === p)!;
    const [random, jsq, mabp] = [row("random"), row("jsq"), row("mabp")];
    for (const r of report.rows) expect(r.requests).toBeGreaterThan(50);
    expect(mabp.hitRatio).toBeGreaterThan(jsq.hitRatio);
    expect(mabp.hitRatio).toBeGreaterThan(random.hitRatio);
    expect(mabp.workPerRequest).toBeLessThan(jsq.workPerRequest);
    expect(mabp.workPerRequest).toBeLessThan(random.workPerRequest);
    expect(report.table).toContain("hit ratio");
  }, 60_000);
});
