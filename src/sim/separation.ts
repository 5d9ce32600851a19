/**
 * The two-branch separation instance of Proposition 3. Two branches with identical capacity (one unit
 * per slot) and no successors; each arriving unit must go to exactly one branch. Branch b1 holds object
 * A and b2 holds object B; a unit of state A costs penalty 1 on b1 and K on b2 (the paired instance, B,
 * the reverse). Work is 1 either way, so only memory distinguishes the branches.
 *
 * The one-step penalty of a policy is measured on the paired instances: at every decision the router is
 * asked for both memory states with the same queues and the same tie-breaking draw, and the penalty is
 * their mean — exactly the expectation over a uniformly drawn instance, with no sampling noise from the
 * draw itself. A memory-invariant rule (BP) then pays (K+1)/2 per unit; MABP pays 1 unless the queue
 * differential exceeds ν(K−1). The trajectory follows a uniformly drawn instance. Gap = BP − MABP,
 * bounded by (K−1)/2 in this average form (the minimax form of the proposition is at least (K−1)/2).
 */
import { PrimitiveTable } from "../routing/primitives.js";
import { commodity } from "../routing/commodity.js";
import { createRouter } from "../routing/router.js";
import { signatureOf } from "../routing/signature.js";
import type { PeerView, RoutingPolicyName } from "../routing/types.js";
import { createRng } from "../util/rng.js";
import { poisson } from "./sampling.js";

export interface SeparationOptions {
  readonly K: number;
  readonly nu: number;
  readonly load: number;
  readonly horizon: number;
  readonly seed: number;
  readonly warmupFraction: number;
}

const SIG_A = signatureOf("separation:A");
const SIG_B = signatureOf("separation:B");
const C = commodity("sep", 0, "any");

/** Mean one-step penalty per unit of `policy` on the paired separation instance. */
export function separationPenalty(policy: RoutingPolicyName, o: SeparationOptions): number {
  const table = new PrimitiveTable({
    "sep/0": {
      noReuse: { work: 1, penalty: o.K, successors: [] },
      reuse: { work: 1, penalty: 1, successors: [] },
    },
  });
  let u = 0;
  const router = createRouter(policy, { primitives: table, nu: o.nu, reservationTtl: 0, random: () => u });
  const rng = createRng(o.seed * 9973 + 11);
  const holds = [SIG_A, SIG_B];
  const queues = [0, 0];
  const warmup = Math.floor(o.horizon * o.warmupFraction);
  let total = 0;
  let units = 0;
  const views = (): PeerView[] =>
    [0, 1].map((i) => ({
      id: `b${i + 1}`,
      queues: { "sep/0": queues[i]! },
      backlog: queues[i]!,
      signatures: new Set([holds[i]!]),
      memoryUsed: 1,
      memoryBudget: 1,
      capacity: 1,
      stateAt: 0,
    }));
  for (let t = 0; t < o.horizon; t++) {
    const n = poisson(rng, 2 * o.load);
    for (let a = 0; a < n; a++) {
      u = rng();
      const v = views();
      const pressure = Math.max(queues[0]!, queues[1]!) + 1;
      const onA = router.route({ commodity: C, signature: SIG_A, pressure }, v, 1, { now: t })[0];
      const onB = router.route({ commodity: C, signature: SIG_B, pressure }, v, 1, { now: t })[0];
      const penA = onA === "b1" ? 1 : o.K;
      const penB = onB === "b2" ? 1 : o.K;
      if (t >= warmup) {
        total += (penA + penB) / 2;
        units++;
      }
      const realised = rng() < 0.5 ? onA : onB;
      queues[realised === "b1" ? 0 : 1]! += 1;
    }
    for (let i = 0; i < 2; i++) queues[i] = Math.max(0, queues[i]! - 1);
  }
  return units === 0 ? NaN : total / units;
}

/** BP-minus-MABP one-step penalty gap at `K`, averaged over `seeds`. */
export function separationGap(o: Omit<SeparationOptions, "seed">, seeds: readonly number[]): number {
  let sum = 0;
  for (const seed of seeds) {
    sum += separationPenalty("bp", { ...o, seed }) - separationPenalty("mabp", { ...o, seed });
  }
  return sum / seeds.length;
}
