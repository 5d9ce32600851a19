import { describe, expect, it } from "vitest";
import { PeerViewBook } from "../../src/routing/peer-view-book.js";
import type { RoutingAdvert } from "../../src/routing/advert.js";
import { createRouter } from "../../src/routing/router.js";
import { commodity } from "../../src/routing/commodity.js";

const advert = (
  stateAt: number,
  queues: Record<string, number>,
  signatures: number[] = [],
): RoutingAdvert => ({
  queues,
  signatures,
  memoryUsed: signatures.length,
  memoryBudget: 8,
  capacity: 2,
  stateAt,
});

describe("PeerViewBook", () => {
  it("turns an advert into a view, ignores older adverts, and ages fresh → stale → unknown", () => {
    const book = new PeerViewBook({ staleMs: 100, forgetMs: 1_000 });
    expect(book.update("a", advert(10, { "rag/0": 3, "rag/1": 1 }, [7, 9]), 10)).toBe(true);
    let v = book.view("a", 50);
    expect(v).toMatchObject({ backlog: 4, queues: { "rag/0": 3, "rag/1": 1 } });
    expect(v.signatures.has(7)).toBe(true);
    expect(book.update("a", advert(5, { "rag/0": 99 }), 60)).toBe(false);
    expect(book.view("a", 60).backlog).toBe(4);
    // stale: queues kept, memory claims dropped
    v = book.view("a", 200);
    expect(book.freshness("a", 200)).toBe("stale");
    expect(v.backlog).toBe(4);
    expect(v.signatures.has(7)).toBe(false);
    // unknown: empty
    expect(book.freshness("a", 2_000)).toBe("unknown");
    expect(book.view("a", 2_000)).toMatchObject({ backlog: 0, queues: {} });
    book.reset("a");
    expect(book.freshness("a", 60)).toBe("unknown");
  });

  it("a piggybacked state settles the router's reservations booked before it", () => {
    const book = new PeerViewBook();
    const router = createRouter("jsq", { reservationTtl: 10_000 });
    book.onUpdate((peer, at) => router.settle(peer, at));
    const task = { commodity: commodity("rag", 0, "") };
    router.route(task, book.views(["a"], 0), 1, { now: 0 });
    router.route(task, book.views(["a"], 1), 1, { now: 1 });
    expect(router.reserved("a", 2)).toBe(2);
    book.update("a", advert(0.5, { "rag/0": 1 }), 3); // state taken after the first booking only
    expect(router.reserved("a", 3)).toBe(1);
    book.update("a", advert(2, { "rag/0": 1 }), 4);
    expect(router.reserved("a", 4)).toBe(0);
  });

  it("reservations spread N concurrent decisions over equal peers instead of herding on one", () => {
    for (const policy of ["jsq", "bp", "mabp"] as const) {
      const book = new PeerViewBook();
      const primitives = { get: () => ({ work: 1, penalty: 1, successors: [] }) };
      const router = createRouter(policy, { primitives, reservationTtl: 10_000 });
      const peers = ["a", "b", "c", "d"];
      for (const p of peers) book.update(p, advert(0, {}), 0);
      const counts = new Map<string, number>();
      for (let i = 0; i < 40; i++) {
        const [p] = router.route({ commodity: commodity("rag", 0, "") }, book.views(peers, 1), 1, { now: 1 });
        counts.set(p!, (counts.get(p!) ?? 0) + 1);
      }
      expect([...counts.values()].sort()).toEqual([10, 10, 10, 10]);
      // without reservations every decision sees the same state: one peer gets (nearly) all of them
      const blind = createRouter(policy, { primitives, reservationTtl: 0, random: () => 0.5 });
      const blindCounts = new Set<string>();
      for (let i = 0; i < 40; i++) {
        blindCounts.add(
          blind.route({ commodity: commodity("rag", 0, "") }, book.views(peers, 1), 1, { now: 1 })[0]!,
        );
      }
      expect(blindCounts.size).toBe(1);
    }
  });
});
