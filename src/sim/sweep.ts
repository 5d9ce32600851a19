/** Sweeps of the slotted simulator: stable load over the load grid, and fixed-load metrics over seeds. */
import { runSim } from "./engine.js";
import { mean, sd, type RunMetrics } from "./metrics.js";
import { mixedWorkload } from "./mixed-workload.js";
import { withParams, type SimParams } from "./params.js";
import { SIM_POLICIES, type SimPolicyName } from "./policies.js";

/** One run of the mixed workload. */
export function runMixed(policy: SimPolicyName, over: Partial<SimParams>): RunMetrics {
  const p = withParams(over);
  return runSim(mixedWorkload(p), p, SIM_POLICIES[policy]);
}

export interface LoadScan {
  /** Largest stable tested load per seed (0 when none). */
  readonly stableLoads: number[];
  /** Mean post-warm-up backlog per tested load (mean over the seeds that ran it). */
  readonly backlogByLoad: [number, number][];
}

/**
 * Stable load per seed: the largest load of `loads` passing the stability test. The scan stops after
 * `stopAfter` consecutive unstable loads (heavier loads are then taken as unstable, not run).
 */
export function scanLoads(
  policy: SimPolicyName,
  loads: readonly number[],
  seeds: readonly number[],
  over: Partial<SimParams> = {},
  stopAfter = 2,
): LoadScan {
  const stableLoads: number[] = [];
  const backlogs = new Map<number, number[]>();
  for (const seed of seeds) {
    let best = 0;
    let misses = 0;
    for (const load of loads) {
      const m = runMixed(policy, { ...over, load, seed });
      (backlogs.get(load) ?? backlogs.set(load, []).get(load)!).push(m.meanBacklog);
      if (m.stable) {
        best = load;
        misses = 0;
      } else if (++misses >= stopAfter) {
        break;
      }
    }
    stableLoads.push(best);
  }
  const backlogByLoad = loads
    .filter((l) => backlogs.has(l))
    .map((l): [number, number] => [l, mean(backlogs.get(l)!)]);
  return { stableLoads, backlogByLoad };
}

export interface Summary {
  readonly mean: number;
  readonly sd: number;
}

export function summarise(xs: readonly number[]): Summary {
  const finite = xs.filter(Number.isFinite);
  return { mean: mean(finite), sd: sd(finite) };
}

/** Fixed-load metrics over seeds. */
export function atLoad(
  policy: SimPolicyName,
  seeds: readonly number[],
  over: Partial<SimParams> = {},
): Record<keyof Omit<RunMetrics, "policy" | "load" | "stable">, Summary> & { stableFraction: number } {
  const runs = seeds.map((seed) => runMixed(policy, { ...over, seed }));
  const pick = (k: keyof RunMetrics): Summary => summarise(runs.map((r) => r[k] as number));
  return {
    slope: pick("slope"),
    meanBacklog: pick("meanBacklog"),
    penalty: pick("penalty"),
    p95Delay: pick("p95Delay"),
    hitRatio: pick("hitRatio"),
    churn: pick("churn"),
    workPerUnit: pick("workPerUnit"),
    downstreamPerRequest: pick("downstreamPerRequest"),
    completionRatio: pick("completionRatio"),
    stableFraction: runs.filter((r) => r.stable).length / runs.length,
  };
}
