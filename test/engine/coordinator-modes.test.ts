import { describe, expect, it } from "vitest";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { quorumVote } from "../../src/decision/quorum-vote.js";
import type { CoordinatorOptions } from "../../src/engine/coordinator.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { SpeculationBudgetViolation } from "../../src/policy/violation.js";
import { collectModel, harness, recordOf, START } from "./harness.js";

const task = { kind: "echo", payload: null };
/** p50 50 ms, p99 400 ms. */
const TAILED = [50, 50, 50, 50, 50, 50, 50, 50, 400, 400];

describe("Coordinator.fanOut — synchronous", () => {
  it("waits until the deadline and uses partial results; the late branch's lost work is learnt by the ledger", async () => {
    const h = harness();
    h.warm("a", TAILED);
    h.warm("b", TAILED);
    h.transport.addPeer("a", { latency: 30, handler: () => "a" });
    h.transport.addPeer("b", { latency: 1000, handler: () => "b" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 200, model: collectModel() }),
    );
    expect(outcome.classification).toMatchObject({
      mode: "synchronous",
      reason: "budget-between-p50-and-p99-plus-abandon-cost",
    });
    expect(recordOf(outcome, "a")).toMatchObject({ outcome: "partial", decisionRelevant: true });
    expect(recordOf(outcome, "b")).toMatchObject({ outcome: "late", lostWorkMs: 200 });
    expect(outcome.action).toBe("a");
    expect(outcome.answered).toBe(1);
    expect(outcome.elapsedMs).toBe(200);
    expect(outcome.deadlineMissed).toBe(false);
    await h.clock.flush();
    expect(h.ledger.stats()).toMatchObject({ abandonedFanouts: 0, synchronousLateLostMs: 200 });
    expect(h.ledger.stats()).toMatchObject({ cutFanouts: 1, chargedMs: 200 }); // whatever the mode
    // one cut fan-out is fewer than the ledger's minSamples: the cost is still the stated prior (0)
    expect(h.ledger.expectedAbandonCostMs(["a", "b"], h.clock.now())).toBe(0);
  });

  it("answers that complete the requirement are committed", async () => {
    const h = harness();
    h.warm("a", TAILED);
    h.transport.addPeer("a", { latency: 30, handler: () => "a" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 200, model: collectModel() }),
    );
    expect(outcome.classification.mode).toBe("synchronous");
    expect(recordOf(outcome, "a").outcome).toBe("committed");
    expect(outcome.elapsedMs).toBe(30);
  });

  it("an unknown estimate never speculates, however large the budget", async () => {
    const h = harness();
    h.transport.addPeer("a", { latency: 5, handler: () => "a" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 60_000, model: collectModel() }),
    );
    expect(outcome.estimate.status).toBe("unknown");
    expect(outcome.classification).toMatchObject({ mode: "synchronous", reason: "estimate-unknown" });
    expect(outcome.action).toBe("a");
  });

  it("a fan-out that cannot change the action is issued synchronously and waits for its answers", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    const fixed = predicateModel<string, string>({
      prior: "keep",
      decide: () => "keep",
      canFlip: () => false,
    });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 200, model: fixed }),
    );
    expect(outcome.classification).toMatchObject({ mode: "synchronous", reason: "not-decision-relevant" });
    expect(recordOf(outcome, "a")).toMatchObject({ outcome: "committed", decisionRelevant: false });
    expect(outcome.decisionChanged).toBe(false);
  });

  it("waits for the required answers even once the vote is decided: no abandon cost", async () => {
    const h = harness();
    for (const p of ["a", "b", "c"]) h.warm(p, TAILED);
    h.transport.addPeer("a", { latency: 10, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("b", { latency: 20, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("c", { latency: 150, handler: () => ({ vote: "no" }) });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        budgetMs: 200,
        model: quorumVote({ prior: "no" }),
      }),
    );
    expect(outcome.classification.mode).toBe("synchronous");
    expect(outcome.elapsedMs).toBe(150);
    expect(outcome.action).toBe("yes");
    expect(outcome.branches.map((b) => b.outcome)).toEqual(["committed", "committed", "committed"]);
    expect(outcome.abandonCostMs).toBe(0);
    expect(h.transport.stats("c")).toMatchObject({ answered: 1, abandoned: 0 });
  });

  it("with a quorum requirement, cancels the branches beyond the quorum once it is met", async () => {
    const h = harness({ coordinator: { explorationRate: 0, measureBelowSamples: 0 } });
    for (const p of ["a", "b", "c"]) h.warm(p, TAILED);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 20, handler: () => "b" });
    h.transport.addPeer("c", { latency: 150, handler: () => "c" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        budgetMs: 200,
        required: { kind: "quorum", k: 2 },
        model: collectModel(),
      }),
    );
    expect(outcome.classification.mode).toBe("synchronous");
    expect(outcome.elapsedMs).toBe(20);
    expect(outcome.branches.map((b) => b.outcome)).toEqual(["committed", "committed", "abandoned"]);
    await h.clock.runUntilIdle();
    expect(h.transport.stats("c")).toMatchObject({ answered: 0, abandoned: 1 });
  });
});

describe("Coordinator.fanOut — degrade and violations", () => {
  it("degrades to the fallback when the budget is at or below p50, without touching the network", async () => {
    const h = harness();
    h.warm("a", TAILED);
    h.transport.addPeer("a", { latency: 10 });
    const outcome = await h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 40,
      model: collectModel(),
      fallback: () => "cached",
    });
    expect(outcome.classification).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50" });
    expect(outcome).toMatchObject({ degraded: true, action: "cached", branches: [], answered: 0 });
    expect(outcome.violation).toBeUndefined();
    expect(h.transport.stats("a").branches).toBe(0);
  });

  it("without a fallback, degrade is a SpeculationBudgetViolation (budget-at-or-below-p50)", async () => {
    const h = harness();
    h.warm("a", TAILED);
    h.transport.addPeer("a", { latency: 10 });
    const run = h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 40, model: collectModel() });
    await expect(run).rejects.toBeInstanceOf(SpeculationBudgetViolation);
    await expect(run).rejects.toMatchObject({
      code: "SPECULATION_BUDGET_VIOLATION",
      kind: "budget-at-or-below-p50",
    });
    expect(h.coordinator.stats().violations).toBe(1);
    expect(h.seen.violations).toHaveLength(1);
  });

  it("usePriorOnDegrade takes the model's prior instead of throwing", async () => {
    const h = harness();
    h.warm("a", TAILED);
    const outcome = await h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 40,
      model: quorumVote({ prior: "no" }),
      usePriorOnDegrade: true,
    });
    expect(outcome).toMatchObject({ degraded: true, action: "no" });
  });

  it("an expired deadline is a violation: degrade with a fallback, thrown without — never a hang", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10 });
    const outcome = await h.coordinator.fanOut(task, {
      peers: ["a"],
      deadline: START - 5,
      model: collectModel(),
      fallback: () => "local",
    });
    expect(outcome.degraded).toBe(true);
    expect(outcome.action).toBe("local");
    expect(outcome.violation?.code).toBe("SPECULATION_BUDGET_VIOLATION");
    expect(outcome.violation?.message).toContain("-5");
    expect(outcome.classification).toMatchObject({
      mode: "degrade",
      reason: "non-positive-budget",
      budgetMs: -5,
    });
    await expect(
      h.coordinator.fanOut(task, { peers: ["a"], deadline: START, model: collectModel() }),
    ).rejects.toMatchObject({ kind: "non-positive-budget" });
    expect(h.coordinator.stats()).toMatchObject({ violations: 2, byMode: { degrade: 1 } });
    expect(h.seen.ends).toHaveLength(1);
  });

  it("a corrupt estimate (p99 < p50) is a violation turned into degrade", async () => {
    // a latency source whose fan-out estimate is corrupt: fresh, p50 50 ms, p99 20 ms
    const real = new LatencyBook({ windowMs: 60_000, minSamples: 20 });
    const corrupt: CoordinatorOptions["book"] = {
      estimate: (peer, now) => real.estimate(peer, now),
      begin: (peer, now, deadline) => real.begin(peer, now, deadline),
      fanout: (peers, requirement, now) => ({
        ...real.fanout(peers, requirement, now),
        status: "fresh",
        p50Ms: 50,
        p99Ms: 20,
      }),
    };
    const h = harness({ coordinator: { book: corrupt } });
    const outcome = await h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 100,
      model: collectModel(),
      fallback: () => "local",
    });
    expect(outcome.violation?.message).toContain("p99 (20 ms) < p50 (50 ms)");
    expect(outcome.classification).toMatchObject({ mode: "degrade", reason: "p99-below-p50" });
    expect(h.coordinator.stats().violations).toBe(1);
  });

  it("the never policy without a fallback is a bad argument, not a budget violation", async () => {
    const h = harness();
    h.warm("a", 10);
    const run = h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 100,
      model: collectModel(),
      policy: "never",
    });
    await expect(run).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(run).rejects.not.toBeInstanceOf(SpeculationBudgetViolation);
    expect(h.coordinator.stats().violations).toBe(0);
  });

  it("the never policy degrades, always-sync issues synchronously", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    const never = await h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 100,
      model: collectModel(),
      policy: "never",
      fallback: () => "local",
    });
    expect(never.classification.reason).toBe("policy-never");
    const sync = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: 100,
        model: collectModel(),
        policy: "always-sync",
      }),
    );
    expect(sync.classification.reason).toBe("policy-always-sync");
    expect(sync.action).toBe("a");
  });
});
