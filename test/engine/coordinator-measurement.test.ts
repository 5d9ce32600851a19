import { describe, expect, it } from "vitest";
import { quorumVote } from "../../src/decision/quorum-vote.js";
import { collectModel, harness, recordOf } from "./harness.js";
import type { Harness } from "./harness.js";

const task = { kind: "vote", payload: null };
const PEERS = ["fast-1", "fast-2", "gw"];

/** Two fast peers that vote yes and one slow peer that votes no: after two yes, gw can never flip the vote. */
function quorumSwarm(coordinator: Parameters<typeof harness>[0] = {}): Harness {
  const h = harness(coordinator);
  h.transport.addPeer("fast-1", { latency: 8, handler: () => ({ vote: "yes" }) });
  h.transport.addPeer("fast-2", { latency: 12, handler: () => ({ vote: "yes" }) });
  h.transport.addPeer("gw", { latency: (rng) => (rng() < 0.1 ? 400 : 20), handler: () => ({ vote: "no" }) });
  return h;
}

function vote(h: Harness, budgetMs: number, options: { signal?: AbortSignal } = {}) {
  return h.clock.runUntilSettled(
    h.coordinator.fanOut(task, {
      peers: PEERS,
      budgetMs,
      model: quorumVote({ prior: "no" }),
      fallback: () => "no",
      ...options,
    }),
  );
}

describe("Coordinator — abandoned branches feed the estimate", () => {
  it("a tail abandoned at the speculation deadline still raises p99, and speculation stops", async () => {
    // no horizon probes: every cut branch is censored (test/mesh/horizon-probes.test.ts covers probes)
    const h = harness({ coordinator: { explorationRate: 0, horizonProbe: { share: 0 } } });
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 12, handler: () => "b" });
    h.transport.addPeer("c", { latency: 500, handler: () => "c" }); // the gateway congests
    const modes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const outcome = await h.clock.runUntilSettled(
        h.coordinator.fanOut(task, { peers: ["a", "b", "c"], budgetMs: 100, model: collectModel() }),
      );
      modes.push(outcome.classification.mode);
      if (outcome.classification.mode === "speculate") {
        // abandoned at the deadline: recorded like a timeout, censored at deadline − start (never a sample)
        expect(recordOf(outcome, "c").outcome).toBe("abandoned");
      }
    }
    await h.clock.runUntilIdle();
    const c = h.book.estimate("c", h.clock.now());
    expect(c.samples).toBe(100); // the warm-up's: a call cut at its deadline is not a sample
    expect(c.censoredEnds).toBeGreaterThan(0); // the abandoned calls were counted, not thrown away
    expect(c.p99Ms).toBeGreaterThanOrEqual(99);
    expect(c.p99Kind).toBe("lower-bound"); // and the estimate says the tail beyond them is unseen
    // the stale p99 (10 ms) would have kept speculating for ever; the fresh one stops it
    expect(modes[0]).toBe("speculate");
    expect(modes.at(-1)).toBe("synchronous");
  });

  it("a branch abandoned before its deadline is a censored observation at its age", async () => {
    const h = harness({ coordinator: { explorationRate: 0 } });
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("b", { latency: 20, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("c", { latency: 60, handler: () => ({ vote: "no" }) });
    const before = h.book.estimate("c", h.clock.now());
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        budgetMs: 200,
        model: quorumVote({ prior: "no" }),
      }),
    );
    await h.clock.runUntilIdle();
    expect(recordOf(outcome, "c")).toMatchObject({ outcome: "abandoned", lostWorkMs: 20 });
    expect(recordOf(outcome, "c").measurement).toBeUndefined();
    const after = h.book.estimate("c", h.clock.now());
    expect(after.samples).toBe(before.samples); // not a sample: only "slower than 20 ms"
    expect(after.censoredEnds).toBe(1);
    expect(after.p99Ms).toBeGreaterThanOrEqual(before.p99Ms);
  });

  it("a caller abort abandons every branch (no measurement) as censored observations", async () => {
    const h = harness({ coordinator: { explorationRate: 1 } });
    h.transport.addPeer("a", { latency: 50 });
    h.transport.addPeer("b", { latency: 80 });
    const controller = new AbortController();
    h.clock.setTimer(() => controller.abort("user"), 30);
    const run = h.coordinator.fanOut(task, {
      peers: ["a", "b"],
      budgetMs: 200,
      model: collectModel(),
      signal: controller.signal,
    });
    await expect(h.clock.runUntilSettled(run)).rejects.toMatchObject({ code: "ABORTED" });
    await h.clock.runUntilIdle();
    for (const peer of ["a", "b"]) {
      expect(h.book.estimate(peer, h.clock.now())).toMatchObject({
        samples: 0,
        censoredEnds: 1,
        censored: 0,
      });
    }
    expect(h.transport.stats("a")).toMatchObject({ abandoned: 1, answered: 0 });
  });
});

describe("Coordinator — measurement branches against starvation", () => {
  it("without measurement, a speculation never completes a call to a peer it always decides out", async () => {
    const h = quorumSwarm({ coordinator: { explorationRate: 0, measureBelowSamples: 0 } });
    h.warm("fast-1", 8);
    h.warm("fast-2", 12);
    h.warm("gw", 20); // fresh, on 100 samples (a known p99: see test/estimate/lower-bounds.test.ts)
    let speculated = 0;
    for (let i = 0; i < 40; i++) {
      const c = (await vote(h, 1_000)).classification;
      if (c.mode === "speculate") speculated++;
      // gw's censored ends can leave a quantile a lower bound for a moment: then the rule does not
      // speculate, and that synchronous fan-out is the only one that waits for gw
      else expect(["p50-lower-bound", "p99-lower-bound"]).toContain(c.reason);
    }
    await h.clock.runUntilIdle();
    expect(speculated).toBeGreaterThanOrEqual(35);
    // every speculation settled on the two fast yes votes and abandoned gw: only censored ends
    expect(h.book.estimate("gw", h.clock.now())).toMatchObject({
      samples: 100 + (40 - speculated),
      censoredEnds: speculated,
    });
    // once its samples leave the window the estimate is unknown, and the synchronous fan-out that
    // follows waits for gw (it pays no abandon cost): the estimate heals only through that
    await h.clock.advance(61_000);
    expect(h.book.estimate("gw", h.clock.now()).status).toBe("unknown");
    const sync = await vote(h, 1_000);
    expect(sync.classification.reason).toBe("estimate-unknown");
    expect(recordOf(sync, "gw").outcome).toBe("committed");
  });

  it("a quorum's slow peer that is always decided-out reaches a fresh estimate", async () => {
    // gw is measured until its window holds 120 answers: enough for a known p99
    const h = quorumSwarm({ coordinator: { measureBelowSamples: 120 } });
    for (let i = 0; i < 300; i++) await vote(h, 1_000);
    await h.clock.runUntilIdle();
    const gw = h.book.estimate("gw", h.clock.now());
    expect(gw.status).toBe("fresh");
    expect(gw.p50Ms).toBeGreaterThanOrEqual(19);
    expect(gw.p50Ms).toBeLessThan(25);
    const results = [];
    for (const budgetMs of [1_000, 100, 10]) results.push((await vote(h, budgetMs)).classification);
    const [wide, mid, narrow] = results;
    expect(wide).toMatchObject({ mode: "speculate", reason: "budget-exceeds-p99-plus-abandon-cost" });
    expect(wide!.fanoutP99Ms).toBeGreaterThan(100); // gw's 400 ms tail is in the fan-out p99
    expect(mid).toMatchObject({
      mode: "synchronous",
      reason: "budget-between-p50-and-p99-plus-abandon-cost",
    });
    expect(narrow).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50" });
  });

  it("measurement branches are labelled, not charged as lost work, and the ledger reports them apart", async () => {
    const h = quorumSwarm({ coordinator: { measureBelowSamples: 200 } });
    h.warm("fast-1", 8);
    h.warm("fast-2", 12);
    h.warm("gw", 20); // fresh, a known p99, but fewer completed samples than measureBelowSamples (200)
    const outcome = await vote(h, 1_000);
    expect(outcome.classification.mode).toBe("speculate");
    expect(outcome.elapsedMs).toBe(12); // the fan-out did not wait for the measurement
    expect(outcome.action).toBe("yes");
    const gw = recordOf(outcome, "gw");
    expect(gw).toMatchObject({ outcome: "abandoned", measurement: true, lostWorkMs: 0, unsettled: true });
    expect(outcome.abandonCostMs).toBe(0);
    await h.clock.runUntilIdle();
    const settled = h.seen.branches.find((b) => b.record.peer === "gw")?.record;
    expect(settled).toMatchObject({ outcome: "abandoned", measurement: true, lostWorkMs: 0 });
    expect(settled?.result.kind).toBe("answer");
    expect(settled?.measurementWorkMs).toBeGreaterThan(0);
    expect(h.transport.stats("gw")).toMatchObject({ answered: 1, abandoned: 0, workLostMs: 0 });
    expect(h.book.estimate("gw", h.clock.now()).samples).toBe(101);
    expect(h.ledger.stats()).toMatchObject({
      abandonedBranches: 0,
      chargedMs: 0,
      synchronousLateLostMs: 0,
      measurementBranches: 1,
    });
    expect(h.ledger.peerStats("gw")).toMatchObject({ abandoned: 0, lostWorkMs: 0 });
  });

  it("speculative fan-outs keep the ledger honest: measured branches add nothing to the abandon cost", async () => {
    const h = harness({ coordinator: { explorationRate: 1 } });
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
    expect(outcome.elapsedMs).toBe(20);
    expect(recordOf(outcome, "c")).toMatchObject({ outcome: "abandoned", measurement: true, lostWorkMs: 0 });
    await h.clock.runUntilIdle();
    expect(h.ledger.stats()).toMatchObject({
      speculativeFanouts: 1,
      abandonedFanouts: 0,
      chargedMs: 0,
      measurementBranches: 1,
      measurementWorkMs: 60,
    });
    expect(h.ledger.expectedAbandonCostMs(3, h.clock.now())).toBe(0);
    expect(h.book.estimate("c", h.clock.now()).censoredEnds).toBe(0);
  });

  it("explores with the injected random source when the estimate already has samples", async () => {
    const draws: number[] = [];
    const random = (): number => {
      const r = draws.length % 2 === 0 ? 0.01 : 0.99;
      draws.push(r);
      return r;
    };
    const h = harness({ coordinator: { explorationRate: 0.05, random } });
    for (const peer of ["a", "b", "c"]) h.warm(peer, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("b", { latency: 20, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("c", { latency: 60, handler: () => ({ vote: "no" }) });
    const run = () =>
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, {
          peers: ["a", "b", "c"],
          budgetMs: 200,
          model: quorumVote({ prior: "no" }),
        }),
      );
    // every branch of a sampled peer draws as it is issued (a, b, c): c draws 0.01, then 0.99
    const first = await run(); // c's draw 0.01 < 0.05: a candidate, measured
    await h.clock.runUntilIdle();
    const second = await run(); // c's draw 0.99: abandoned, censored
    await h.clock.runUntilIdle();
    expect(recordOf(first, "c").measurement).toBe(true);
    expect(recordOf(second, "c")).toMatchObject({ outcome: "abandoned", lostWorkMs: 20 });
    expect(recordOf(second, "c").measurement).toBeUndefined();
    expect(draws).toHaveLength(6); // one draw per branch issued to a sampled peer
    expect(h.book.estimate("c", h.clock.now())).toMatchObject({ samples: 101, censoredEnds: 1 });
  });

  it("bounds the measurement branches running at once per peer", async () => {
    const h = harness({ coordinator: { maxMeasurementsPerPeer: 1, measureBelowSamples: 200 } });
    h.transport.addPeer("a", { latency: 5, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("b", { latency: 5, handler: () => ({ vote: "yes" }) });
    h.transport.addPeer("slow", { latency: 500, handler: () => ({ vote: "no" }) });
    h.warm("a", 5);
    h.warm("b", 5);
    h.warm("slow", 20); // fresh enough to speculate on, too few samples: every branch a candidate
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push(
        await h.clock.runUntilSettled(
          h.coordinator.fanOut(task, {
            peers: ["a", "b", "slow"],
            budgetMs: 1_000,
            model: quorumVote({ prior: "no" }),
          }),
        ),
      );
    }
    expect(outcomes.map((o) => recordOf(o, "slow").measurement === true)).toEqual([true, false, false]);
    await h.clock.runUntilIdle();
    expect(h.book.estimate("slow", h.clock.now())).toMatchObject({ samples: 101, censoredEnds: 2 });
    // the slot is free again once the measurement ended
    const next = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["a", "b", "slow"],
        budgetMs: 1_000,
        model: quorumVote({ prior: "no" }),
      }),
    );
    expect(recordOf(next, "slow").measurement).toBe(true);
  });

  it("rejects a bad explorationRate", () => {
    expect(() => harness({ coordinator: { explorationRate: 2 } })).toThrow(/explorationRate/);
  });
});
