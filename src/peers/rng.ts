/**
 * Small seeded random sources for the shipped peer workloads and the testbed: deterministic given the
 * seed, independent of Math.random, cheap (no allocation per draw). Built on src/util/rng.ts's
 * generator; streams are keyed by names through `hash32` (src/util/hash.ts).
 */
import { hash32 } from "../util/hash.js";
import { createRng as mulberry32, exponential } from "../util/rng.js";

/** Mix several integers into one 32-bit seed (murmur3 finaliser after each step). */
export function mixSeed(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h ^= p >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A seed given as a number or a string, as configs write it. */
export type Seed = number | string;

export function seedOf(seed: Seed): number {
  return typeof seed === "number" ? mixSeed(Math.floor(seed)) : hash32(seed);
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal. */
  normal(): number;
  /** Exponential with the given mean. */
  exponential(mean: number): number;
}

/**
 * mulberry32 (src/util/rng.ts) with normal and exponential draws, good enough for workload models.
 *
 * @example
 * const rng = createRng(mixSeed(seedOf("run-1"), hash32("peer-a")));
 * const u = rng.next();
 */
export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  let spare: number | null = null;
  return {
    next,
    normal() {
      if (spare !== null) {
        const s = spare;
        spare = null;
        return s;
      }
      // Box-Muller; 1 - u keeps the log argument in (0, 1].
      const u = 1 - next();
      const v = next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    exponential: (mean) => exponential(next, mean),
  };
}
