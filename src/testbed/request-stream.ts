/**
 * The seeded request stream: per coordinator, Poisson arrivals at its rate over the run, each with a
 * question id. The stream depends only on (seed, coordinator name, rate, duration): every policy gets
 * the same one, because every request is sent once under each policy, each copy meeting the request's
 * own moment of the latency model (docs/testbed.md, "The load and fairness").
 */
import { hash32 } from "../util/hash.js";
import { createRng, mixSeed } from "../peers/rng.js";
import type { CoordinatorSpec } from "./scenario-types.js";

export interface StreamRequest {
  readonly coordinator: string;
  readonly index: number;
  /** Offset from the start of the phase, ms. */
  readonly atMs: number;
  readonly question: string;
}

/** All requests of `coordinators` within `durationMs`, sorted by time. `salt` separates phases. */
export function requestStream(
  seed: number,
  coordinators: readonly CoordinatorSpec[],
  durationMs: number,
  salt = "run",
): StreamRequest[] {
  const out: StreamRequest[] = [];
  for (const c of coordinators) {
    const rng = createRng(mixSeed(seed, hash32(c.name), hash32(salt)));
    const meanGap = 1000 / c.ratePerS;
    let at = rng.exponential(meanGap);
    for (let i = 0; at < durationMs; i++) {
      out.push({ coordinator: c.name, index: i, atMs: at, question: `${salt}:${c.name}:${i}` });
      at += rng.exponential(meanGap);
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}
