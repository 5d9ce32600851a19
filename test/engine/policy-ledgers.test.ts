import { describe, expect, it } from "vitest";
import { PolicyLedgers } from "../../src/engine/policy-ledgers.js";
import { collectModel, harness } from "./harness.js";

const task = { kind: "echo", payload: null };

describe("PolicyLedgers", () => {
  it("makes a policy's ledger on first use, once, with the same options for all", () => {
    const ledgers = new PolicyLedgers({ priorMs: 7, minSamples: 2 });
    expect(ledgers.made()).toEqual([]);
    const naive = ledgers.of("naive-p50");
    expect(ledgers.of("naive-p50")).toBe(naive);
    const rule = ledgers.of("p99-boundary");
    expect(rule).not.toBe(naive);
    expect(rule.options).toEqual(naive.options);
    expect(ledgers.made().map(([p]) => p)).toEqual(["p99-boundary", "naive-p50"]);
  });

  it("refuses a bad option at construction, naming it", () => {
    expect(() => new PolicyLedgers({ minSamples: 0 })).toThrow(/abandonLedger\.minSamples: got 0/);
  });
});

describe("Coordinator: each policy decides with its own abandon ledger", () => {
  it("naive-p50's abandons do not raise the cost the rule decides with", async () => {
    const h = harness({ ledger: { minSamples: 1 } });
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 12, handler: () => "b" });
    h.transport.addPeer("c", { latency: 500, handler: () => "c" }); // a tail the estimate has not seen
    const fanout = { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() };
    const naive = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { ...fanout, policy: "naive-p50" }),
    );
    expect(naive.classification.mode).toBe("speculate");
    expect(naive.abandonCostMs).toBe(100);
    await h.clock.flush();
    expect(h.coordinator.ledgers.of("naive-p50").stats()).toMatchObject({ cutFanouts: 1, chargedMs: 100 });

    // the rule's ledger has seen no cut: it decides with its prior (0), not with naive-p50's 100 ms
    const rule = await h.clock.runUntilSettled(h.coordinator.fanOut(task, { ...fanout, peers: ["a", "b"] }));
    expect(rule.classification.abandonCostMs).toBe(0);
    expect(h.coordinator.ledgers.of("p99-boundary").stats()).toMatchObject({ cutFanouts: 0 });
    // and naive-p50 still decides with its own
    const again = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { ...fanout, peers: ["a", "b"], policy: "naive-p50" }),
    );
    expect(again.classification.abandonCostMs).toBeCloseTo(100, 6);
  });
});
