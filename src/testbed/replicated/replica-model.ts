/**
 * The replicas of the replicated scenario as latency models: one per replica (the scenario's body and
 * tail, a stall group of its own), the options its node's `synthetic` handler is given, and the p99
 * the model implies (sampled), which says which budgets lie below the replicas' p99.
 */
import { createLatencyModel } from "../../peers/latency-model.js";
import type { LatencyModelOptions } from "../../peers/latency-model.js";
import { createRng } from "../../peers/rng.js";
import { nearestRank } from "../../util/nearest-rank.js";
import type { ReplicatedScenario } from "./scenario.js";

export function replicaId(i: number): string {
  return `replica-${i + 1}`;
}

export function replicaModel(s: ReplicatedScenario, i: number): LatencyModelOptions {
  const { body, tail, stall } = s.latency;
  return {
    seed: s.seed,
    body,
    tail,
    gateway: { group: `stall-${replicaId(i)}`, ...stall },
  };
}

/** Each replica's p99, ms, from `samples` draws at uniform moments of the run (seeded). */
export function modelP99s(s: ReplicatedScenario, samples = 100_000): number[] {
  const spanMs = (s.warmupS + s.durationS) * 1000;
  return Array.from({ length: s.replicas }, (_, i) => {
    const model = createLatencyModel(replicaModel(s, i));
    const rng = createRng(s.seed + i + 1);
    const xs: number[] = [];
    const t0 = Date.UTC(2026, 0, 1);
    for (let n = 0; n < samples; n++) xs.push(model.sample(t0 + rng.next() * spanMs, rng).totalMs);
    xs.sort((a, b) => a - b);
    return nearestRank(xs, 0.99) ?? NaN;
  });
}
