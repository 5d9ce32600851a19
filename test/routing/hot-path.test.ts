/**
 * The allocation-free scoring path gives the same answers as the plain one: MABP's batch `scoreAll`
 * equals `score` per candidate, the hashed SignatureSet equals a Set, per-peer slots equal the
 * string-keyed reservation semantics (also past the queue-key limit).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commodity } from "../../src/routing/commodity.js";
import { PeerSlot } from "../../src/routing/peer-slot.js";
import { mabpScorer } from "../../src/routing/policies/mabp.js";
import { PrimitiveTable } from "../../src/routing/primitives.js";
import { QueueKeys } from "../../src/routing/queue-keys.js";
import { ReservationBook } from "../../src/routing/reservations.js";
import { createRouter, registerRoutingPolicy } from "../../src/routing/router.js";
import { NO_MEMORY, SignatureSet, signatureOf } from "../../src/routing/signature.js";
import type { PeerView, RouteTask } from "../../src/routing/types.js";

const KEYS = ["r/0", "r/1", "r/2", "m/0"];
const table = new PrimitiveTable({
  "r/0": {
    noReuse: { work: 4, penalty: 4, successors: [{ key: "r/1", p: 0.6 }] },
    reuse: { work: 1, penalty: 1, successors: [{ key: "r/1", p: 0.1 }] },
    bySignature: new Map([
      [signatureOf("r:3"), { work: 2, penalty: 0.5, successors: [{ key: "r/2", p: 0.3 }] }],
    ]),
  },
  "r/1": { noReuse: { work: 2, penalty: 2, successors: [{ key: "r/2", p: 0.5 }] } },
});
const sigs = Array.from({ length: 8 }, (_, i) => signatureOf(`r:${i}`));

interface PeerSpec {
  readonly queues: readonly number[];
  readonly held: readonly number[];
  readonly plainSet: boolean;
  readonly maxBacklog?: number | undefined;
}

const peerArb: fc.Arbitrary<PeerSpec> = fc.record({
  queues: fc.array(fc.nat(30), { minLength: KEYS.length, maxLength: KEYS.length }),
  held: fc.subarray(sigs),
  plainSet: fc.boolean(),
  maxBacklog: fc.option(fc.integer({ min: 1, max: 150 }), { nil: undefined }),
});

function viewOf(i: number, p: PeerSpec): PeerView {
  const queues: Record<string, number> = {};
  let backlog = 0;
  // Insertion order varies by peer, as adverts' objects do.
  KEYS.forEach((_, j) => {
    const k = KEYS[(i + j) % KEYS.length]!;
    queues[k] = p.queues[(i + j) % KEYS.length]!;
    backlog += queues[k];
  });
  return {
    id: `p${i}`,
    queues,
    backlog,
    signatures: p.plainSet ? new Set<number>(p.held) : SignatureSet.bounded(p.held),
    memoryUsed: 0,
    memoryBudget: 10,
    capacity: 4,
    ...(p.maxBacklog === undefined ? {} : { maxBacklog: p.maxBacklog }),
    stateAt: 0,
  };
}

// The same scorer without its batch form: the router then scores one candidate at a time.
const perCandidate = mabpScorer(5, table);
registerRoutingPolicy("mabp-one-at-a-time", () => ({
  score: (task, c, ctx) => perCandidate.score(task, c, ctx),
}));

describe("MABP batch scoring", () => {
  it("routes exactly as per-candidate scoring, reservations and ties included (property)", () => {
    fc.assert(
      fc.property(
        fc.array(peerArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.record({ z: fc.nat(9), key: fc.constantFrom("r/0", "r/1", "m/0"), q: fc.nat(40) }), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 3 }),
        (peers, stream, k) => {
          const views = peers.map((p, i) => viewOf(i, p));
          const a = createRouter("mabp", { primitives: table, reservationTtl: 5 });
          const b = createRouter("mabp-one-at-a-time", { primitives: table, reservationTtl: 5 });
          stream.forEach((s, t) => {
            const [cls, stage] = s.key.split("/") as [string, string];
            const task: RouteTask = {
              commodity: commodity(cls, Number(stage), String(s.z)),
              signature: signatureOf(`r:${s.z}`),
              pressure: s.q,
            };
            const ctx = { now: t };
            expect(a.route(task, views, k, ctx)).toEqual(b.route(task, views, k, ctx));
            if (t % 4 !== 3) return;
            for (const v of views) {
              a.settle(v.id, t - 2);
              b.settle(v.id, t - 2);
            }
          });
        },
      ),
      { numRuns: 200 },
    );
  });

  it("gives the same scores as per-candidate scoring, to the bit", () => {
    const views = [
      viewOf(0, { queues: [3, 7, 1, 0], held: [sigs[3]!], plainSet: false }),
      viewOf(1, { queues: [0, 2, 9, 4], held: [], plainSet: true }),
      viewOf(2, { queues: [5, 5, 5, 5], held: [sigs[1]!, sigs[3]!], plainSet: false }),
    ];
    const scorer = mabpScorer(5, table);
    const task: RouteTask = { commodity: commodity("r", 0, "3"), signature: sigs[3]!, pressure: 6 };
    const out = new Float64Array(3);
    const candidates = views.map((view) => ({
      view,
      backlog: view.backlog,
      transferPenalty: 0.1,
      queue: (k: string): number => view.queues[k] ?? 0,
    }));
    scorer.scoreAll!(
      task,
      {
        size: 3,
        at: (i) => candidates[i]!,
        view: (i) => views[i]!,
        queue: (i, key) => views[i]!.queues[key] ?? 0,
        keyId: () => -1,
        transferPenalty: () => 0.1,
      },
      { now: 0 },
      out,
    );
    expect([...out]).toEqual(candidates.map((c) => scorer.score(task, c, { now: 0 })));
  });
});

describe("SignatureSet", () => {
  it("has() agrees with a Set on random members and non-members (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 80 }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 40 }),
        (members, probes) => {
          const set = SignatureSet.bounded(members);
          const kept = new Set(set.toArray());
          for (const s of [...members, ...probes, 0, 0xffffffff, 0x80000000]) {
            expect(set.has(s)).toBe(kept.has(s >>> 0));
            expect(set.hasInt32(s | 0)).toBe(kept.has(s >>> 0));
          }
          expect(set.has(NO_MEMORY)).toBe(false);
        },
      ),
    );
  });
});

describe("per-peer slots", () => {
  it("count reservations per key through ring growth, expiry and settle", () => {
    const keys = new QueueKeys();
    const slot = new PeerSlot(keys, 10);
    const view: PeerView = {
      id: "p",
      queues: { a: 2, b: 5 },
      backlog: 7,
      signatures: new Set(),
      memoryUsed: 0,
      memoryBudget: 0,
      capacity: 1,
      stateAt: 0,
    };
    for (let t = 0; t < 40; t++) slot.book(keys.id(t % 3 === 0 ? "a" : "b"), t % 3 === 0 ? "a" : "b", t);
    expect(slot.total).toBe(40);
    expect(slot.expire(35)).toBe(14); // bookings at 26..39 live
    expect(slot.queue(view, keys.id("a"), "a")).toBe(2 + 5); // 27, 30, 33, 36, 39
    expect(slot.queue(view, keys.id("b"), "b")).toBe(5 + 9);
    slot.settle(33);
    expect(slot.total).toBe(6);
    expect(slot.queue(view, keys.id("a"), "a")).toBe(2 + 2);
    // a new view object is read afresh
    expect(slot.queue({ ...view, queues: { a: 9 } }, keys.id("a"), "a")).toBe(9 + 2);
  });

  it("keys past the limit take the string path with the same results", () => {
    const limited = new QueueKeys(2);
    const small = new ReservationBook(100, limited);
    const big = new ReservationBook(100);
    for (const [i, key] of ["a", "b", "c", "d", "c", "a"].entries()) {
      small.book("p", key, i);
      big.book("p", key, i);
    }
    expect(limited.id("c")).toBe(-1);
    for (const key of ["a", "b", "c", "d", "e"])
      expect(small.queue("p", key, 3)).toBe(big.queue("p", key, 3));
    small.settle("p", 3);
    big.settle("p", 3);
    for (const key of ["a", "b", "c", "d"]) expect(small.queue("p", key, 4)).toBe(big.queue("p", key, 4));
    expect(small.total("nobody", 0)).toBe(0);
  });
});
