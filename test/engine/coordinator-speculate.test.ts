import { describe, expect, it } from "vitest";
import { quorumVote } from "../../src/decision/quorum-vote.js";
import { collectModel, harness, recordOf, START } from "./harness.js";

const task = { kind: "echo", payload: null };

describe("Coordinator.fanOut — speculate", () => {
  it("commits every answer that arrives before the deadline", async () => {
    const h = harness();
    for (const [peer, ms] of [
      ["a", 10],
      ["b", 15],
      ["c", 20],
    ] as const) {
      h.transport.addPeer(peer, { latency: ms, handler: () => peer });
      h.warm(peer, ms);
    }
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 200, model: collectModel() }),
    );
    expect(outcome.classification.mode).toBe("speculate");
    expect(outcome.classification.reason).toBe("budget-exceeds-p99-plus-abandon-cost");
    expect(outcome.action).toBe("a,b,c");
    expect(outcome.priorAction).toBe("none");
    expect(outcome.decisionChanged).toBe(true);
    expect(outcome.branches.map((b) => b.outcome)).toEqual(["committed", "committed", "committed"]);
    expect(outcome.branches.every((b) => b.decisionRelevant)).toBe(true);
    expect(outcome.answered).toBe(3);
    expect(outcome.abandonCostMs).toBe(0);
    expect(outcome.elapsedMs).toBe(20);
    expect(outcome.deadlineMissed).toBe(false);
    expect(recordOf(outcome, "b").latencyMs).toBe(15);
    expect(h.transport.stats("c")).toMatchObject({ answered: 1, workDoneMs: 20, workLostMs: 0 });
  });

  it("abandons the branches still out at the deadline and charges their lost work to the ledger", async () => {
    const h = harness({ ledger: { minSamples: 1 } });
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 12, handler: () => "b" });
    h.transport.addPeer("c", { latency: 500, handler: () => "c" }); // a tail the estimate has not seen yet
    const first = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() }),
    );
    expect(first.classification.mode).toBe("speculate");
    expect(first.classification.abandonCostMs).toBe(0);
    expect(recordOf(first, "c")).toMatchObject({
      outcome: "abandoned",
      lostWorkMs: 100,
      decisionRelevant: false,
    });
    expect(first.action).toBe("a,b");
    expect(first.abandonCostMs).toBe(100);
    expect(first.elapsedMs).toBe(100);
    expect(h.transport.stats("c")).toMatchObject({ abandoned: 1, workLostMs: 100 });
    await h.clock.flush();
    expect(h.ledger.stats()).toMatchObject({ abandonedFanouts: 1, abandonedBranches: 1, chargedMs: 100 });

    // The next fan-out prices speculation with what the peers really lost (the window's mean lost work per
    // cut fan-out: one cut fan-out, minSamples 1).
    const second = h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() });
    const outcome = await h.clock.runUntilSettled(second);
    expect(outcome.classification.abandonCostMs).toBeCloseTo(100, 6);
  });

  it("stops as soon as the outstanding answers can no longer change the action", async () => {
    const h = harness();
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("b", { latency: 20, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("c", { latency: 60, handler: () => ({ vote: "no" }) });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        budgetMs: 200,
        model: quorumVote({ prior: "no" }),
      }),
    );
    expect(outcome.classification.mode).toBe("speculate");
    expect(outcome.elapsedMs).toBe(20); // not 60: after two "yes", c's vote cannot flip the plurality
    expect(outcome.action).toBe("yes");
    expect(outcome.decisionChanged).toBe(true);
    expect(recordOf(outcome, "c")).toMatchObject({ outcome: "abandoned", lostWorkMs: 20 });
    expect(outcome.branches.filter((b) => b.outcome === "committed").map((b) => b.peer)).toEqual(["a", "b"]);
    expect(outcome.infoGainPerCommitted).toBeGreaterThan(0);
  });

  it("a quorum requirement is decidable once k answered", async () => {
    const h = harness();
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 30, handler: () => "b" });
    h.transport.addPeer("c", { latency: 90, handler: () => "c" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        required: { kind: "quorum", k: 2 },
        budgetMs: 200,
        model: collectModel(),
      }),
    );
    expect(outcome.estimate.requirement).toEqual({ kind: "quorum", k: 2 });
    expect(outcome.elapsedMs).toBe(30);
    expect(recordOf(outcome, "c").outcome).toBe("abandoned");
  });

  it("runs the coordinator's continuation alongside the branches", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    let sawSignal: AbortSignal | undefined;
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: 100,
        model: collectModel(),
        continuation: async (signal) => {
          sawSignal = signal;
          await new Promise<void>((resolve) => h.clock.setTimer(resolve, 40));
          return "own work done";
        },
      }),
    );
    expect(outcome.continuation).toEqual({ status: "fulfilled", value: "own work done" });
    expect(outcome.elapsedMs).toBe(40);
    expect(sawSignal?.aborted).toBe(false);
  });

  it("a continuation still running at the deadline is aborted and reported", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    let sawSignal: AbortSignal | undefined;
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: 100,
        model: collectModel(),
        continuation: (signal) => {
          sawSignal = signal;
          return new Promise(() => undefined);
        },
      }),
    );
    expect(outcome.continuation?.status).toBe("rejected");
    expect(sawSignal?.aborted).toBe(true);
    expect(outcome.elapsedMs).toBe(100);
    expect(h.clock.now()).toBe(START + 100);
  });

  it("picking k of the candidates leaves out peers whose fresh p99 exceeds the budget", async () => {
    const h = harness();
    h.warm("slow1", [20, 20, 20, 400]);
    h.warm("slow2", [20, 20, 20, 400]);
    h.warm("fast1", 10);
    h.warm("fast2", 12);
    for (const peer of ["slow1", "fast1", "slow2", "fast2"])
      h.transport.addPeer(peer, { latency: 10, handler: () => peer });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["slow1", "fast1", "slow2", "fast2"],
        k: 2,
        budgetMs: 100,
        model: collectModel(),
      }),
    );
    expect(outcome.branches.map((b) => b.peer)).toEqual(["fast1", "fast2"]);
    expect(outcome.classification.mode).toBe("speculate");
    expect(h.transport.stats("slow1").branches).toBe(0);
    expect(h.transport.stats("slow2").branches).toBe(0);
  });

  it("a router picks among the eligible candidates and is checked", async () => {
    const h = harness();
    for (const peer of ["a", "b", "c"]) {
      h.warm(peer, 10);
      h.transport.addPeer(peer, { latency: 10, handler: () => peer });
    }
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        k: 1,
        budgetMs: 100,
        model: collectModel(),
        router: (candidates) => [candidates[candidates.length - 1] ?? "a"],
      }),
    );
    expect(outcome.branches.map((b) => b.peer)).toEqual(["c"]);
    await expect(
      h.coordinator.fanOut(task, {
        peers: ["a", "b"],
        k: 1,
        budgetMs: 100,
        model: collectModel(),
        router: () => ["z"],
      }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("router") as unknown,
    });
  });

  it("propagates the hop and the deadline on every branch", async () => {
    const h = harness();
    h.warm("a", 10);
    const seen: Array<{ hop: number; deadline: number; origin: string }> = [];
    h.transport.addPeer("a", { latency: 10, handler: (_t, ctx) => (seen.push(ctx), "a") });
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a"],
        budgetMs: 100,
        reserveMs: 10,
        parentHop: 2,
        model: collectModel(),
      }),
    );
    expect(seen[0]).toMatchObject({ hop: 3, deadline: START + 90, origin: "coordinator-1" });
  });
});
