import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RouteAdapter } from "../../src/engine/route-adapter.js";
import type { Requirement } from "../../src/estimate/types.js";
import { contextSignature } from "../../src/routing/context-task.js";
import { PeerViewBook } from "../../src/routing/peer-view-book.js";
import { PrimitiveTable } from "../../src/routing/primitives.js";
import { ROUTING_POLICIES, createRouter } from "../../src/routing/router.js";
import { collectModel, harness } from "./harness.js";

const primitives = new PrimitiveTable({
  "rag/0": {
    noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 0.6 }] },
    reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 0.1 }] },
  },
});
const SIG = contextSignature("rag", "c1");

const peerArb = fc.record({
  latency: fc.integer({ min: 1, max: 400 }),
  warmed: fc.boolean(),
  holds: fc.boolean(),
  queue: fc.integer({ min: 0, max: 30 }),
});

describe("RouteAdapter", () => {
  it("never sends a speculative branch to a peer whose fresh p99 exceeds the budget or is unknown", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(peerArb, { minLength: 2, maxLength: 7 }),
        fc.integer({ min: 5, max: 500 }),
        fc.constantFrom(...ROUTING_POLICIES),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 7 }),
        fc.constantFrom<"auto" | "strict">("auto", "strict"),
        async (specs, budgetMs, policy, kRaw, quorumRaw, speculation) => {
          const h = harness();
          const views = new PeerViewBook();
          const router = createRouter(policy, { primitives, reservationTtl: 1_000 });
          views.onUpdate((p, at) => router.settle(p, at));
          const peers = specs.map((_, i) => `p${i}`);
          specs.forEach((s, i) => {
            const id = peers[i]!;
            h.transport.addPeer(id, { latency: s.latency, handler: () => id });
            if (s.warmed) h.warm(id, s.latency, 50);
            views.update(
              id,
              {
                queues: { "rag/0": s.queue },
                signatures: s.holds ? [SIG] : [],
                memoryUsed: 1,
                memoryBudget: 4,
                capacity: 2,
                stateAt: h.clock.now(),
              },
              h.clock.now(),
            );
          });
          const adapter = new RouteAdapter({ router, views, speculation });
          const k = Math.min(kRaw, peers.length);
          const required: Requirement =
            quorumRaw >= 1 && quorumRaw < k ? { kind: "quorum", k: quorumRaw } : { kind: "all" };
          const task = { kind: "context", payload: { requestClass: "rag", context: "c1" } };
          const start = h.clock.now();
          const outcome = await h.clock.runUntilSettled(
            h.coordinator.fanOut(task, {
              peers,
              k,
              required,
              budgetMs,
              model: collectModel(),
              fallback: () => "none",
              router: adapter.route,
            }),
          );
          const c = outcome.classification;
          if (c.reason === "speculation-infeasible-peer") {
            // the rule would have speculated; a chosen peer is what stopped it
            expect(c.budgetMs).toBeGreaterThan(c.fanoutP99Ms + c.abandonCostMs);
            expect(
              outcome.branches.some((b) => adapter.explanation(task, b.peer)?.speculationFeasible === false),
            ).toBe(true);
          }
          if (c.mode !== "speculate") return;
          for (const b of outcome.branches) {
            const e = h.book.estimate(b.peer, start);
            expect(e.status).toBe("fresh");
            expect(e.p99Ms).toBeLessThanOrEqual(budgetMs);
            expect(adapter.explanation(task, b.peer)?.speculationFeasible).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("strict: the context holder is passed over when its p99 exceeds the budget", async () => {
    const h = harness();
    const views = new PeerViewBook();
    const router = createRouter("mabp", { primitives });
    for (const [id, latency, holds] of [
      ["slow-holder", 300, true],
      ["fast", 10, false],
    ] as const) {
      h.transport.addPeer(id, { latency, handler: () => id });
      h.warm(id, latency, 50);
      views.update(
        id,
        {
          queues: {},
          signatures: holds ? [SIG] : [],
          memoryUsed: 0,
          memoryBudget: 4,
          capacity: 1,
          stateAt: 0,
        },
        h.clock.now(),
      );
    }
    const task = { kind: "context", payload: { requestClass: "rag", context: "c1" } };
    const ctx = { now: h.clock.now(), budgetMs: 100, task, estimates: h.book };
    expect(
      new RouteAdapter({ router, views, speculation: "strict" }).route(["slow-holder", "fast"], 1, ctx),
    ).toEqual({ peers: ["fast"], speculationFeasible: true });
    // by score (auto, all-of-1) MABP goes to the holder; the rule then does not speculate on it
    const auto = new RouteAdapter({ router: createRouter("mabp", { primitives }), views });
    expect(auto.route(["slow-holder", "fast"], 1, ctx)).toEqual({
      peers: ["slow-holder"],
      speculationFeasible: false,
    });
    const explained = auto.explanation(task, "slow-holder");
    expect(explained).toMatchObject({
      policy: "mabp",
      hit: true,
      speculationFeasible: false,
      viewFreshness: "fresh",
    });
  });

  it("with every peer at its admission limit it still returns k peers (the least loaded)", () => {
    const h = harness();
    const views = new PeerViewBook();
    for (const [id, q] of [
      ["a", 5],
      ["b", 3],
    ] as const) {
      views.update(
        id,
        {
          queues: { "rag/0": q },
          signatures: [],
          memoryUsed: 0,
          memoryBudget: 1,
          capacity: 1,
          maxBacklog: 3,
          stateAt: 0,
        },
        0,
      );
    }
    const adapter = new RouteAdapter({ router: createRouter("jsq"), views });
    const task = { kind: "context", payload: { requestClass: "rag", context: "c" } };
    expect(adapter.route(["a", "b"], 1, { now: 0, budgetMs: 100, task, estimates: h.book }).peers).toEqual([
      "b",
    ]);
  });

  it("a quorum speculation the rule allows runs synchronous when a chosen peer is infeasible, and says why", async () => {
    const h = harness();
    const views = new PeerViewBook();
    const router = createRouter("jsq");
    const peers = ["fast1", "fast2", "slow"];
    for (const id of peers) {
      const latency = id === "slow" ? 300 : 10;
      h.transport.addPeer(id, { latency, handler: () => id });
      h.warm(id, latency, 50);
      views.update(
        id,
        { queues: {}, signatures: [], memoryUsed: 0, memoryBudget: 1, capacity: 1, stateAt: 0 },
        h.clock.now(),
      );
    }
    const adapter = new RouteAdapter({ router, views });
    const task = { kind: "context", payload: { requestClass: "rag", context: "c1" } };
    const fanOut = (routed: boolean) =>
      h.clock.runUntilSettled(
        h.coordinator.fanOut(task, {
          peers,
          required: { kind: "quorum", k: 2 },
          budgetMs: 100,
          model: collectModel(),
          fallback: () => "none",
          ...(routed ? { router: adapter.route } : {}),
        }),
      );
    // without a router's judgement the rule speculates: 2 of 3 answer well within the budget
    expect((await fanOut(false)).classification).toMatchObject({
      mode: "speculate",
      reason: "budget-exceeds-p99-plus-abandon-cost",
    });
    // the adapter judges "slow" (fresh p99 300 ms > 100 ms) unfit for a speculative branch
    const outcome = await fanOut(true);
    expect(outcome.classification).toMatchObject({
      mode: "synchronous",
      reason: "speculation-infeasible-peer",
    });
    expect(outcome.classification.budgetMs).toBeGreaterThan(
      outcome.classification.fanoutP99Ms + outcome.classification.abandonCostMs,
    );
    expect(adapter.explanation(task, "slow")?.speculationFeasible).toBe(false);
  });
});
