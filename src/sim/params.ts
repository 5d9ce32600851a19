/** Parameters of the slotted simulator, with the paper's defaults (Section VI-A). */
import { invalid } from "../errors.js";

export interface SimParams {
  /** Slots per run. Paper: 600. */
  readonly horizon: number;
  /** Normalised load ρ (see docs/routing.md for the normalisation). Paper: ρ0 = 0.85. */
  readonly load: number;
  /** Memory budget fraction β: B_i = β · B_i^max. Paper: 0.25. */
  readonly beta: number;
  /** Zipf skew of state-type (reuse) popularity. Paper: 1.0. */
  readonly skew: number;
  /** Transition noise: a realised successor draw is replaced by a fair coin with this probability. Paper: 0.10. */
  readonly noise: number;
  /** Transfer cost κ of migrating an object between peers (replication). Paper: 2.0. */
  readonly migrationCost: number;
  /** Noncached factor K: work and penalty of a memory-eligible stage without a compatible object. Paper: 4. */
  readonly K: number;
  /** Penalty weight ν. Paper: 5. */
  readonly nu: number;
  readonly seed: number;
  /** Fraction of slots discarded as warm-up. Paper: 0.2. */
  readonly warmupFraction: number;
}

export const DEFAULT_PARAMS: SimParams = Object.freeze({
  horizon: 600,
  load: 0.85,
  beta: 0.25,
  skew: 1.0,
  noise: 0.1,
  migrationCost: 2.0,
  K: 4,
  nu: 5,
  seed: 1,
  warmupFraction: 0.2,
});

/** Stability test of the paper: post-warm-up backlog slope below 0.035 and mean backlog below 120. */
export const STABILITY = Object.freeze({ maxSlope: 0.035, maxMeanBacklog: 120 });

/** The paper's sweep grids. */
export const GRIDS = Object.freeze({
  load: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2],
  beta: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5],
  K: [1, 2, 4, 8, 16],
  nu: [0, 1, 2, 5, 10, 20],
  skew: [0.5, 1.0, 1.5, 2.0],
});

export function withParams(over: Partial<SimParams>): SimParams {
  const p = { ...DEFAULT_PARAMS, ...over };
  const check = (name: keyof SimParams, ok: boolean, expected: string): void => {
    if (!ok) throw invalid(`sim.${name}`, p[name], expected);
  };
  check("horizon", Number.isInteger(p.horizon) && p.horizon >= 10, "an integer >= 10");
  check("load", p.load > 0 && Number.isFinite(p.load), "a number > 0");
  check("beta", p.beta >= 0 && p.beta <= 1, "a number >= 0 <= 1");
  check("skew", p.skew >= 0 && Number.isFinite(p.skew), "a number >= 0");
  check("noise", p.noise >= 0 && p.noise <= 1, "a number >= 0 <= 1");
  check("K", p.K >= 1 && Number.isFinite(p.K), "a number >= 1");
  check("nu", p.nu >= 0 && Number.isFinite(p.nu), "a number >= 0");
  check("warmupFraction", p.warmupFraction >= 0 && p.warmupFraction < 1, "a number >= 0 < 1");
  return p;
}
