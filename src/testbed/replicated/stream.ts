/**
 * The replicated scenario's request stream, from its seed alone: at each budget, Poisson arrivals at
 * `ratePerS` over warm-up and measurement; each request with its replica order (the primaries first,
 * rotated so that every replica is a primary as often) and the order its policy copies leave in
 * (shuffled, so no policy always goes first).
 */
import { createRng, exponential } from "../../util/rng.js";
import type { HedgePolicyName } from "../../hedge/types.js";
import type { ReplicatedScenario } from "./scenario.js";

export interface ReplicatedRequestPlan {
  /** Index in its budget's stream: the same request under every policy. */
  readonly request: number;
  readonly budgetMs: number;
  /** ms from the stream's start. */
  readonly atMs: number;
  /** Indices of the replicas, in the order the request names them. */
  readonly order: readonly number[];
  readonly policies: readonly HedgePolicyName[];
  /** Counted (after the warm-up). */
  readonly measured: boolean;
}

export function replicatedStream(s: ReplicatedScenario): ReplicatedRequestPlan[] {
  const rng = createRng(s.seed);
  const endMs = (s.warmupS + s.durationS) * 1000;
  const out: ReplicatedRequestPlan[] = [];
  for (const budgetMs of s.budgetsMs) {
    let at = exponential(rng, 1000 / s.ratePerS);
    for (let i = 0; at < endMs; i++) {
      const first = Math.floor(rng() * s.replicas);
      const order = Array.from({ length: s.replicas }, (_, j) => (first + j) % s.replicas);
      const policies = [...s.policies];
      for (let j = policies.length - 1; j > 0; j--) {
        const m = Math.floor(rng() * (j + 1));
        [policies[j], policies[m]] = [policies[m]!, policies[j]!];
      }
      out.push({ request: i, budgetMs, atMs: at, order, policies, measured: at >= s.warmupS * 1000 });
      at += exponential(rng, 1000 / s.ratePerS);
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}
