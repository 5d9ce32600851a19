/**
 * The doubling, jittered waits membership probes back off with (as gRPC's reconnects do): the waits of
 * unknown or down addresses and of suspected peers, and the jitter of the probe round itself.
 */

/** The wait after `lastMs`: `firstMs` at first (`lastMs` 0), then twice the last, at most `maxMs`. */
export function doubledWait(lastMs: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, Math.max(firstMs, 2 * lastMs));
}

/** `ms` jittered ±20%, so that nodes started together do not probe in lockstep. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return ms * (0.8 + 0.4 * random());
}
