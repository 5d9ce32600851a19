import { describe, expect, it } from "vitest";
import { commodity } from "../../src/routing/commodity.js";
import { explainMabp } from "../../src/routing/policies/mabp.js";
import { perWork, placementScore, serviceWeight } from "../../src/routing/pressure.js";
import { PrimitiveTable } from "../../src/routing/primitives.js";
import { createRouter } from "../../src/routing/router.js";
import { signatureOf } from "../../src/routing/signature.js";
import type { PeerView } from "../../src/routing/types.js";

const miss = { work: 4, penalty: 4, successors: [{ key: "v/0", p: 0.6 }] };
const hit = { work: 1, penalty: 1, successors: [{ key: "v/0", p: 0.1 }] };

function view(id: string, queues: Record<string, number>, sigs: number[] = []): PeerView {
  const backlog = Object.values(queues).reduce((a, b) => a + b, 0);
  return {
    id,
    queues,
    backlog,
    signatures: new Set(sigs),
    memoryUsed: 0,
    memoryBudget: 10,
    capacity: 8,
    stateAt: 0,
  };
}

describe("memory-augmented pressure", () => {
  it("serviceWeight is Q_in − Σ P Q' − ν p (hand-computed)", () => {
    const q = (k: string): number => ({ "v/0": 10 })[k] ?? 0;
    expect(serviceWeight(20, miss, q, 5)).toBeCloseTo(20 - 0.6 * 10 - 5 * 4); // −6
    expect(serviceWeight(20, hit, q, 5)).toBeCloseTo(20 - 0.1 * 10 - 5 * 1); // 14
  });

  it("the routing differential is Q_i − Q_j − ν d (a placement with no successor, no penalty, unit work)", () => {
    const plain = { work: 1, penalty: 0, successors: [] };
    expect(placementScore(12, 5, plain, () => 0, 5, 0.2)).toBeCloseTo(6);
  });

  it("perWork divides positive pressure by work and multiplies a negative one", () => {
    expect(perWork(8, 4)).toBe(2);
    expect(perWork(-8, 4)).toBe(-32);
    // less work always ranks higher at equal pressure, whatever the sign
    expect(perWork(8, 1)).toBeGreaterThan(perWork(8, 4));
    expect(perWork(-8, 1)).toBeGreaterThan(perWork(-8, 4));
  });

  it("placementScore combines differential, successor pressure, ν(p + d), per unit of work", () => {
    const q = (k: string): number => ({ "r/0": 3, "v/0": 10 })[k] ?? 0;
    // 20 − 3 − 0.1·10 − 5·(1 + 0.2) = 10 → /1
    expect(placementScore(20, 3, hit, q, 5, 0.2)).toBeCloseTo(10);
    // 20 − 3 − 0.6·10 − 5·(4 + 0) = −9 → ·4
    expect(placementScore(20, 3, miss, q, 5, 0)).toBeCloseTo(-36);
  });

  it("explainMabp reports the components the router ranks on", () => {
    const sig = signatureOf("r:7");
    const table = new PrimitiveTable({ "r/0": { noReuse: miss, reuse: hit } });
    const task = { commodity: commodity("r", 0, "7"), signature: sig, pressure: 20 };
    const e = explainMabp(task, view("a", { "r/0": 3, "v/0": 10 }, [sig]), table, 5);
    expect(e).toMatchObject({
      compat: sig,
      queueIn: 20,
      queueDest: 3,
      successorPressure: 1,
      penalty: 1,
      work: 1,
    });
    expect(e.weight).toBeCloseTo(11);
    expect(e.score).toBeCloseTo(11);
  });
});

describe("the paper's separation example (Proposition 3)", () => {
  const sigA = signatureOf("A");
  const sigB = signatureOf("B");
  const c = commodity("sep", 0, "x");

  for (const K of [1, 2, 4, 8, 16]) {
    it(`K=${K}: memory-aware pays 1, memory-oblivious pays (K+1)/2 on the paired instances`, () => {
      const t = new PrimitiveTable({
        "sep/0": {
          noReuse: { work: 1, penalty: K, successors: [] },
          reuse: { work: 1, penalty: 1, successors: [] },
        },
      });
      // identical visible queues and capacities; b1 holds A, b2 holds B
      const views = [view("b1", { "sep/0": 2 }, [sigA]), view("b2", { "sep/0": 2 }, [sigB])];
      const pen = (peer: string | undefined, sig: number): number =>
        (peer === "b1" && sig === sigA) || (peer === "b2" && sig === sigB) ? 1 : K;
      let u = 0;
      const mabp = createRouter("mabp", { primitives: t, nu: 5, reservationTtl: 0, random: () => u });
      const bp = createRouter("bp", { reservationTtl: 0, random: () => u });
      let mabpTotal = 0;
      let bpTotal = 0;
      const draws = [0.1, 0.3, 0.6, 0.9];
      for (const d of draws) {
        u = d;
        for (const sig of [sigA, sigB]) {
          mabpTotal += pen(mabp.route({ commodity: c, signature: sig }, views, 1, { now: 0 })[0], sig);
          bpTotal += pen(bp.route({ commodity: c, signature: sig }, views, 1, { now: 0 })[0], sig);
        }
      }
      const n = draws.length * 2;
      expect(mabpTotal / n).toBe(1);
      expect(bpTotal / n).toBe((K + 1) / 2);
    });
  }
});
