/**
 * A small seeded pseudo-random generator (mulberry32): deterministic runs for tests, the in-memory
 * transport and the simulated testbed. Not for anything security-related.
 *
 * @example
 * const rng = createRng(42);
 * const u = rng(); // in [0, 1)
 * const ms = exponential(rng, 20); // mean 20
 */
export type Rng = () => number;

/** mulberry32 over a 32-bit seed; returns floats in [0, 1). */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An exponential sample with the given mean. */
export function exponential(rng: Rng, meanMs: number): number {
  return -Math.log(1 - rng()) * meanMs;
}

/** A log-normal sample with the given median and shape sigma (sigma 0 gives the median). */
export function logNormal(rng: Rng, medianMs: number, sigma: number): number {
  const u1 = 1 - rng();
  const u2 = rng();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return medianMs * Math.exp(sigma * z);
}
