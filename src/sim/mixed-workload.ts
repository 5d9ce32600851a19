/**
 * The mixed RAG–MoE–agentic graph of the paper's evaluation, as a finite SFMSN:
 *
 *   rag:   retrieve (memory) → generate (memory) → verify with prob. π
 *   moe:   expert (memory) → verify with prob. π
 *   agent: plan (memory) → tool (memory, prob. 0.9) → verify with prob. π
 *
 * A memory-eligible stage with a compatible resident object (the context of its class and state type)
 * costs work 1 and penalty 1 and creates a verifier job with π = 0.1; without one it costs K and K and
 * π = 0.6 (work reuse and successor-law shaping, the two mechanisms of Theorem 2 and Corollary 1).
 * Verifying costs 2. Six heterogeneous nodes; ingress is uniform, so location-blind routing overloads
 * the small ones.
 */
import { PrimitiveTable, type PrimitiveEntry, type PrimitiveSpec } from "../routing/primitives.js";
import { commodity } from "../routing/commodity.js";
import { signatureOf } from "../routing/signature.js";
import type { Commodity } from "../routing/types.js";
import type { SimParams } from "./params.js";
import type { RequestClass, SimObject, Workload } from "./workload.js";

/** Shape of the mixed workload (fixed; the paper's parameters are in SimParams). */
export const MIXED_SHAPE = Object.freeze({
  capacities: [4, 6, 8, 8, 10, 12],
  transferPenalty: 0.1,
  verifyWork: 2,
  verifyProbMiss: 0.6,
  verifyProbHit: 0.1,
  toolProb: 0.9,
  classes: [
    { name: "rag", share: 0.4, memoryStages: 2, stateTypes: 120 },
    { name: "moe", share: 0.3, memoryStages: 1, stateTypes: 60 },
    { name: "agent", share: 0.3, memoryStages: 2, stateTypes: 120 },
  ],
});

export function mixedWorkload(params: SimParams): Workload {
  const S = MIXED_SHAPE;
  const K = params.K;
  const noisy = (p: number): number => (1 - params.noise) * p + params.noise * 0.5;

  const classes: RequestClass[] = [];
  const objects: SimObject[][] = [];
  const commodities: Commodity[][][] = [];
  const specs: Record<string, PrimitiveSpec> = {};
  const priorSpecs: Record<string, PrimitiveSpec> = {};
  let footprint = 0;
  let referenceWork = 0;
  let noMemoryWork = 0;

  for (const c of S.classes) {
    const stages = [];
    const nStages = c.memoryStages + 1;
    for (let k = 0; k < nStages; k++) stages.push({ key: `${c.name}/${k}`, memory: k < c.memoryStages });
    classes.push({ name: c.name, share: c.share, stages, stateTypes: c.stateTypes });

    const objs: SimObject[] = [];
    for (let z = 0; z < c.stateTypes; z++) {
      const signature = signatureOf(`${c.name}:${z}`);
      const size = 1 + (signature % 3);
      objs.push({ signature, size });
      footprint += size;
    }
    objects.push(objs);
    commodities.push(
      stages.map((_, k) => Array.from({ length: c.stateTypes }, (_, z) => commodity(c.name, k, String(z)))),
    );

    // Stage primitives, last memory stage creates the verifier job.
    const verifyKey = `${c.name}/${c.memoryStages}`;
    const hitWork: number[] = [];
    const missWork: number[] = [];
    for (let k = c.memoryStages; k >= 0; k--) {
      const key = `${c.name}/${k}`;
      if (k === c.memoryStages) {
        const v: PrimitiveEntry = { work: S.verifyWork, penalty: S.verifyWork, successors: [] };
        specs[key] = { noReuse: v };
        priorSpecs[key] = { noReuse: v };
        hitWork[k] = missWork[k] = S.verifyWork;
        continue;
      }
      const last = k === c.memoryStages - 1;
      const nextKey = last ? verifyKey : `${c.name}/${k + 1}`;
      const pMiss = noisy(last ? S.verifyProbMiss : c.name === "agent" ? S.toolProb : 1);
      const pHit = noisy(last ? S.verifyProbHit : c.name === "agent" ? S.toolProb : 1);
      const noReuse: PrimitiveEntry = { work: K, penalty: K, successors: [{ key: nextKey, p: pMiss }] };
      const reuse: PrimitiveEntry = { work: 1, penalty: 1, successors: [{ key: nextKey, p: pHit }] };
      specs[key] = { noReuse, reuse };
      priorSpecs[key] = { noReuse };
      hitWork[k] = 1 + pHit * hitWork[k + 1]!;
      missWork[k] = K + pMiss * missWork[k + 1]!;
    }
    referenceWork += c.share * hitWork[0]!;
    noMemoryWork += c.share * missWork[0]!;
  }

  const capacity = S.capacities.reduce((a, b) => a + b, 0);
  return {
    name: "mixed",
    nodes: S.capacities.map((mu, i) => ({ id: `n${i}`, capacity: mu, budget: params.beta * footprint })),
    classes,
    objects,
    commodities,
    truth: new PrimitiveTable(specs),
    noReusePrior: new PrimitiveTable(priorSpecs),
    transferPenalty: S.transferPenalty,
    arrivalRate: (params.load * capacity) / referenceWork,
    referenceWork,
    noMemoryWork,
  };
}
