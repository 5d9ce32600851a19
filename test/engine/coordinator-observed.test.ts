import { describe, expect, it } from "vitest";
import { observedSetKey } from "../../src/estimate/observed-fanouts.js";
import { collectModel, harness } from "./harness.js";

const task = { kind: "echo", payload: null };

describe("Coordinator: the fan-out's own completion time feeds step 4", () => {
  it("peers that queue together: the observed estimate sees the correlation the product cannot", async () => {
    const h = harness();
    const peers = Array.from({ length: 12 }, (_, i) => `p${i}`);
    // Every fan-out, all peers answer after the same latency: 10 ms, or 200 ms one time in five.
    let shared = 10;
    for (const p of peers) h.transport.addPeer(p, { latency: () => shared, handler: () => p });
    for (const p of peers) h.warm(p, [10, 10, 10, 10, 200], 20);
    const first = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers, budgetMs: 1_000, model: collectModel() }),
    );
    expect(first.estimate.basis).toBe("independent");
    expect(first.estimate.p50Ms).toBeGreaterThan(150); // 0.8^12 ≈ 0.07: the product says 200 ms
    for (let i = 0; i < 40; i++) {
      shared = i % 5 === 4 ? 200 : 10;
      await h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers, budgetMs: 1_000, model: collectModel() }),
      );
      await h.clock.advance(50);
    }
    const e = h.book.fanout(peers, { kind: "all" }, h.clock.now());
    expect(e.basis).toBe("observed");
    expect(e.observedSamples).toBe(41);
    expect(e.p50Ms).toBeLessThan(12);
    expect(e.p99Ms).toBeGreaterThan(190);
    expect(h.seen.decisions.at(-1)?.estimate.basis).toBe("observed");
  });

  it("a fan-out cut at its deadline (no probes) is a timeout of the set at the budget", async () => {
    const h = harness({ coordinator: { horizonProbe: { share: 0 } } });
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 500, handler: () => "b" });
    h.warm("a", 10, 30);
    h.warm("b", [10, 10, 10, 500], 40);
    for (let i = 0; i < 25; i++) {
      await h.clock.runUntilSettled(
        h.coordinator.fanOut(task, {
          peers: ["a", "b"],
          budgetMs: 100,
          model: collectModel(),
          fallback: () => "local",
        }),
      );
      await h.clock.flush();
    }
    const e = h.book.fanout(["a", "b"], { kind: "all" }, h.clock.now());
    expect(e.basis).toBe("observed");
    expect(e.p50Ms).toBeGreaterThanOrEqual(99);
    expect(e.p50Ms).toBeLessThanOrEqual(101);
    // The set does not answer within the budget: at or below its p50 the rule degrades.
    expect(h.seen.decisions.at(-1)?.classification.mode).toBe("degrade");
  });

  it("a cut branch that completes as a horizon probe ends the set's observation at its completion", async () => {
    const h = harness();
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 500, handler: () => "b" });
    h.warm("a", 10, 30);
    h.warm("b", [10, 10, 10, 500], 40);
    const fanOut = () =>
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
      );
    const observedSamples = () => h.book.fanout(["a", "b"], { kind: "all" }, h.clock.now()).observedSamples;
    await fanOut();
    expect(h.coordinator.stats().horizonProbes.issued).toBe(1);
    // cut at 100 ms for the caller, but its probe is still out: the fan-out is still in flight
    await h.clock.advance(300);
    expect(observedSamples()).toBe(0);
    await h.clock.advance(300);
    // a answered, b's probe completed at 500 ms: every branch's latency is known, so the fan-out's is
    expect(h.coordinator.stats().horizonProbes.completed).toBe(1);
    expect(observedSamples()).toBe(1);
  });

  it("a probe that fails had not answered by then: the cut fan-out is censored at that age, not dropped", async () => {
    const h = harness();
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", {
      latency: 500,
      handler: async (_task, ctx) => {
        await new Promise<void>((done) => ctx.clock.setTimer(() => done(), 500));
        throw new Error("peer b fails late");
      },
    });
    h.warm("a", 10, 30);
    h.warm("b", [10, 10, 10, 500], 40);
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(h.coordinator.stats().horizonProbes.issued).toBe(1);
    await h.clock.advance(600);
    // the set's one observation: censored where b's probe failed (~500 ms), a lower bound of its p50
    const set = h.book["observed"].get(observedSetKey(["a", "b"], { kind: "all" }));
    const cdf = set?.cdf(h.clock.now());
    expect(cdf?.completedCount).toBe(0);
    expect(cdf?.lowerBound(0.5)).toBe(true);
    expect(cdf?.quantile(0.5)).toBeGreaterThanOrEqual(490);
  });

  it("an answer the model rejects never meets the requirement: the set records no completion at it", async () => {
    const h = harness({ coordinator: { horizonProbe: { share: 0 } } });
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 20, handler: () => 42 });
    h.warm("a", 10, 30);
    h.warm("b", 20, 30);
    const out = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(out.branches.find((b) => b.peer === "b")?.outcome).toBe("failed");
    await h.clock.flush();
    // b's latency is still b's (it answered at 20 ms), but the fan-out never had both answers
    expect(h.book.fanout(["a", "b"], { kind: "all" }, h.clock.now()).observedSamples).toBe(0);
  });
});
