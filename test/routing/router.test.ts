import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commodity } from "../../src/routing/commodity.js";
import { LearnedPrimitives } from "../../src/routing/learned-primitives.js";
import { PrimitiveTable } from "../../src/routing/primitives.js";
import { ReservationBook } from "../../src/routing/reservations.js";
import { createRouter, registerRoutingPolicy, ROUTING_POLICIES } from "../../src/routing/router.js";
import { NO_MEMORY, SignatureSet, signatureOf } from "../../src/routing/signature.js";
import type { PeerView } from "../../src/routing/types.js";

const c = commodity("rag", 0, "z1");
const sig = signatureOf("rag:z1");
const table = new PrimitiveTable({
  "rag/0": {
    noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 0.6 }] },
    reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 0.1 }] },
  },
});

function view(id: string, q: number, o: Partial<PeerView> = {}): PeerView {
  return {
    id,
    queues: { "rag/0": q },
    backlog: q,
    signatures: new Set<number>(),
    memoryUsed: 0,
    memoryBudget: 10,
    capacity: 8,
    stateAt: 0,
    ...o,
  };
}

describe("routers", () => {
  it("JSQ picks the smallest backlog; BP the smallest queue of the task's key", () => {
    const views = [
      view("a", 5, { backlog: 5 }),
      view("b", 1, { queues: { "rag/0": 1, "moe/0": 20 }, backlog: 21 }),
      view("c", 3, { backlog: 3 }),
    ];
    expect(createRouter("jsq").route({ commodity: c }, views, 1, { now: 0 })).toEqual(["c"]);
    expect(createRouter("bp").route({ commodity: c }, views, 1, { now: 0 })).toEqual(["b"]);
  });

  it("MABP prefers a compatible peer until its queue outweighs the memory gain", () => {
    const r = createRouter("mabp", { primitives: table, nu: 5, reservationTtl: 0 });
    const holder = (q: number): PeerView => view("h", q, { signatures: new Set([sig]) });
    expect(r.route({ commodity: c, signature: sig }, [holder(10), view("e", 0)], 1, { now: 0 })).toEqual([
      "h",
    ]);
    expect(r.route({ commodity: c, signature: sig }, [holder(200), view("e", 0)], 1, { now: 0 })).toEqual([
      "e",
    ]);
    // with no signature memory cannot matter: the shorter queue wins
    expect(r.route({ commodity: c }, [holder(10), view("e", 0)], 1, { now: 0 })).toEqual(["e"]);
  });

  it("Cost-BP adds ν·d: stays local when queues tie", () => {
    const r = createRouter("cost-bp", { nu: 5 });
    const views = [view("here", 2), view("there", 2)];
    const costOf = (p: string): number => (p === "here" ? 0 : 0.5);
    expect(r.route({ commodity: c }, views, 1, { now: 0, costOf })).toEqual(["here"]);
    expect(
      createRouter("shortest-path").route({ commodity: c }, [view("x", 0), view("here", 9)], 1, {
        now: 0,
        costOf,
      }),
    ).toEqual(["here"]);
  });

  it("affinity sends to the holder whatever its backlog", () => {
    const views = [view("h", 50, { signatures: new Set([sig]) }), view("e", 0)];
    expect(createRouter("affinity").route({ commodity: c, signature: sig }, views, 1, { now: 0 })).toEqual([
      "h",
    ]);
  });

  it("reservations spread concurrent decisions instead of herding on one peer", () => {
    const views = [view("a", 0), view("b", 0), view("c", 0)];
    const withBook = createRouter("jsq", { reservationTtl: 100 });
    const picks = Array.from({ length: 6 }, () => withBook.route({ commodity: c }, views, 1, { now: 1 })[0]);
    expect(new Set(picks.slice(0, 3)).size).toBe(3);
    expect(withBook.reserved("a", 1)).toBe(2);
    // a state advertised after the bookings covers them
    withBook.settle("a", 2);
    expect(withBook.reserved("a", 3)).toBe(0);
    // and they expire after the TTL
    expect(withBook.reserved("b", 101)).toBe(0);
  });

  it("top-k returns k distinct peers, best first", () => {
    const views = [view("a", 4), view("b", 1), view("c", 3), view("d", 2)];
    expect(createRouter("jsq").route({ commodity: c }, views, 3, { now: 0 })).toEqual(["b", "d", "c"]);
    expect(createRouter("jsq").route({ commodity: c }, views, 9, { now: 0 })).toHaveLength(4);
    expect(createRouter("jsq").route({ commodity: c }, [], 1, { now: 0 })).toEqual([]);
  });

  it("rejects an unknown policy, mabp without primitives, and a speculative route without budget or p99s", () => {
    expect(() => createRouter("nope")).toThrow(/routing\.policy: got "nope", expected a registered policy/);
    expect(() => createRouter("mabp")).toThrow(/routing\.primitives: got nothing, expected primitives/);
    const r = createRouter("jsq");
    expect(() => r.route({ commodity: c }, [view("a", 0)], 1, { now: 0, speculative: true })).toThrow(
      /budgetMs/,
    );
    expect(() =>
      r.route({ commodity: c }, [view("a", 0)], 1, { now: 0, speculative: true, budgetMs: 5 }),
    ).toThrow(/p99Of/);
  });

  it("accepts registered policies", () => {
    registerRoutingPolicy("most-capacity", () => ({ score: (_t, cand) => cand.view.capacity }));
    const views = [view("a", 0, { capacity: 2 }), view("b", 0, { capacity: 9 })];
    expect(createRouter("most-capacity").route({ commodity: c }, views, 1, { now: 0 })).toEqual(["b"]);
  });
});

describe("feasibility (property)", () => {
  const peerArb = fc.record({
    q: fc.nat(50),
    holds: fc.boolean(),
    p99: fc.option(fc.double({ min: 0, max: 500, noNaN: true }), { nil: undefined }),
    maxBacklog: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  });

  for (const policy of ROUTING_POLICIES) {
    it(`${policy} never picks a peer over capacity, nor one whose p99 exceeds the budget on a speculative branch`, () => {
      fc.assert(
        fc.property(
          fc.array(peerArb, { minLength: 1, maxLength: 12 }),
          fc.double({ min: 0, max: 500, noNaN: true }),
          fc.boolean(),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 5 }),
          (peers, budgetMs, speculative, k, rounds) => {
            const views = peers.map((p, i) =>
              view(`p${i}`, p.q, {
                signatures: new Set(p.holds ? [sig] : []),
                ...(p.maxBacklog === undefined ? {} : { maxBacklog: p.maxBacklog }),
              }),
            );
            const byId = new Map(peers.map((p, i) => [`p${i}`, p]));
            const router = createRouter(policy, { primitives: table, reservationTtl: 1000 });
            const ctx = { now: 0, budgetMs, speculative, p99Of: (id: string) => byId.get(id)!.p99 };
            for (let round = 0; round < rounds; round++) {
              const before = new Map(views.map((v) => [v.id, router.reserved(v.id, 0)]));
              const chosen = router.route({ commodity: c, signature: sig }, views, k, ctx);
              expect(new Set(chosen).size).toBe(chosen.length);
              expect(chosen.length).toBeLessThanOrEqual(k);
              for (const id of chosen) {
                const p = byId.get(id)!;
                expect(p.q + before.get(id)!).toBeLessThan(p.maxBacklog ?? Infinity);
                if (speculative) {
                  expect(p.p99).toBeDefined();
                  expect(p.p99!).toBeLessThanOrEqual(budgetMs);
                }
              }
            }
          },
        ),
        { numRuns: 200 },
      );
    });
  }
});

describe("Learn-MABP primitives", () => {
  it("uses no-reuse values for unseen pairs and running means once observed", () => {
    const prior = new PrimitiveTable({ "rag/0": { noReuse: { work: 4, penalty: 4, successors: [] } } });
    const learned = new LearnedPrimitives(prior);
    expect(learned.get("a", "rag/0", sig)).toEqual(prior.get("a", "rag/0", NO_MEMORY));
    learned.observe("a", "rag/0", sig, { work: 1, penalty: 1, successors: ["rag/1"] });
    learned.observe("a", "rag/0", sig, { work: 2, penalty: 0, successors: [] });
    const e = learned.get("a", "rag/0", sig);
    expect(e.work).toBeCloseTo(1.5);
    expect(e.penalty).toBeCloseTo(0.5);
    expect(e.successors).toEqual([{ key: "rag/1", p: 0.5 }]);
    // per peer: another peer is still unseen
    expect(learned.get("b", "rag/0", sig).work).toBe(4);
  });
});

describe("signatures and reservations", () => {
  it("SignatureSet is bounded, deduplicated and never holds NO_MEMORY", () => {
    const s = SignatureSet.bounded([5, 5, 0, 9, 7, 3], 3);
    expect(s.size).toBe(3);
    expect(s.toArray()).toEqual([5, 7, 9]);
    expect(s.has(3)).toBe(false);
    expect(signatureOf("x")).not.toBe(NO_MEMORY);
  });

  it("ReservationBook counts per key and expires", () => {
    const b = new ReservationBook(10);
    b.book("p", "k1", 0);
    b.book("p", "k2", 5);
    expect(b.queue("p", "k1", 1)).toBe(1);
    expect(b.total("p", 6)).toBe(2);
    expect(b.total("p", 11)).toBe(1);
    b.settle("p", 5);
    expect(b.total("p", 6)).toBe(0);
  });
});
