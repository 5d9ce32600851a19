/**
 * A seeded latency model for synthetic peers (the synthetic handler and the testbed share it): a
 * lognormal body (median, sigma in log space); with `probability`, a Pareto(scale, shape) tail excess;
 * and a gateway — episodic correlated queueing, where a request arriving during an episode of its group
 * waits until the episode ends, like peers behind one NAT gateway.
 *
 * Episodes are a pure function of (seed, group, time): each 1 s bucket's episodes are drawn from an RNG
 * keyed by (seed, group, bucket), so processes that share the seed and a wall clock see the same
 * episodes without talking to each other.
 *
 * @example
 * const model = createLatencyModel({ seed: "run-1", body: { medianMs: 8, sigma: 0.4 } });
 * const { queueMs, serviceMs } = model.sample(Date.now(), createRng(seedOf("run-1")));
 */
import { hash32 } from "../util/hash.js";
import { numberAbove, numberRange } from "../util/range.js";
import { createRng, mixSeed, seedOf } from "./rng.js";
import type { Rng, Seed } from "./rng.js";

export interface LognormalBody {
  readonly medianMs: number;
  readonly sigma: number;
}

export interface ParetoTail {
  /** Probability that a request gets a tail excess, in [0, 1]. */
  readonly probability: number;
  /** Pareto scale x_m, ms: the smallest excess. */
  readonly scaleMs: number;
  /** Pareto shape alpha (> 0); smaller is heavier. */
  readonly shape: number;
}

export interface GatewayQueueing {
  /** Peers with the same group (and seed) queue together. */
  readonly group: string;
  /** Poisson rate of episode starts per second. */
  readonly episodesPerSecond: number;
  /** Episode length, uniform in [min, max] ms. */
  readonly durationMs: { readonly min: number; readonly max: number };
}

/** Defaults of the model's parameters where options leave them out (the `synthetic` handler, scenarios). */
export const LATENCY_MODEL_DEFAULTS = {
  body: { medianMs: 5, sigma: 0.3 },
  tail: { probability: 0.01, scaleMs: 50, shape: 1.5 },
  gateway: { episodesPerSecond: 0.2, durationMs: { min: 200, max: 600 } },
  maxMs: 60_000,
} as const;

/** The values each parameter accepts. */
export const LATENCY_MODEL_RANGES = {
  body: { medianMs: numberAbove(0), sigma: numberRange(0, 5) },
  tail: { probability: numberRange(0, 1), scaleMs: numberAbove(0), shape: numberAbove(0) },
  gateway: { episodesPerSecond: numberRange(0, 1000), durationMs: numberRange(0) },
  maxMs: numberAbove(0),
} as const;

export interface LatencyModelOptions {
  readonly seed: Seed;
  readonly body: LognormalBody;
  readonly tail?: ParetoTail;
  readonly gateway?: GatewayQueueing;
  /** Upper clamp for a service time, ms (a Pareto draw can be huge). */
  readonly maxMs?: number;
}

export interface Episode {
  readonly start: number;
  readonly end: number;
}

export interface LatencySample {
  /** Time waiting for the gateway queue to drain (0 outside episodes). */
  readonly queueMs: number;
  readonly bodyMs: number;
  readonly tailMs: number;
  /** bodyMs + tailMs, clamped. */
  readonly serviceMs: number;
  /** queueMs + serviceMs. */
  readonly totalMs: number;
}

export interface LatencyModel {
  readonly options: LatencyModelOptions;
  /** One request arriving at `nowMs` (epoch ms); per-request draws come from `rng`. */
  sample(nowMs: number, rng: Rng): LatencySample;
  /** How long a request arriving at `nowMs` waits for the gateway (0 when no episode covers it). */
  gatewayQueueMs(nowMs: number): number;
  /** Gateway episodes that overlap [fromMs, toMs), sorted by start. */
  episodesBetween(fromMs: number, toMs: number): Episode[];
}

const BUCKET_MS = 1000;

/** The episodes that start in one bucket, drawn from the bucket's own RNG stream. */
function bucketEpisodes(seed: number, gateway: GatewayQueueing, bucket: number): Episode[] {
  if (gateway.episodesPerSecond <= 0) return [];
  const rng = createRng(mixSeed(seed, hash32(gateway.group), bucket));
  const meanGap = BUCKET_MS / gateway.episodesPerSecond;
  const { min, max } = gateway.durationMs;
  const out: Episode[] = [];
  let offset = rng.exponential(meanGap);
  while (offset < BUCKET_MS) {
    const start = bucket * BUCKET_MS + offset;
    out.push({ start, end: start + min + (max - min) * rng.next() });
    offset += rng.exponential(meanGap);
  }
  return out;
}

export function createLatencyModel(options: LatencyModelOptions): LatencyModel {
  const seed = seedOf(options.seed);
  const maxMs = options.maxMs ?? 60_000;
  const { body, tail, gateway } = options;
  const logMedian = Math.log(body.medianMs);

  const episodesBetween = (fromMs: number, toMs: number): Episode[] => {
    if (gateway === undefined) return [];
    const first = Math.floor((fromMs - gateway.durationMs.max) / BUCKET_MS);
    const last = Math.floor(toMs / BUCKET_MS);
    const out: Episode[] = [];
    for (let b = first; b <= last; b++) {
      for (const e of bucketEpisodes(seed, gateway, b)) {
        if (e.end > fromMs && e.start < toMs) out.push(e);
      }
    }
    return out;
  };

  const gatewayQueueMs = (nowMs: number): number => {
    if (gateway === undefined) return 0;
    // Union of episodes covering now: the queue drains when the last overlapping episode ends.
    let end = nowMs;
    let covered = false;
    for (let guard = 0; guard < 64; guard++) {
      let extended = false;
      for (const e of episodesBetween(nowMs, end + 1)) {
        if (e.start <= (covered ? end : nowMs) && e.end > end) {
          end = e.end;
          covered = true;
          extended = true;
        }
      }
      if (!extended) break;
    }
    return covered ? end - nowMs : 0;
  };

  return {
    options,
    gatewayQueueMs,
    episodesBetween,
    sample(nowMs, rng) {
      const bodyMs = Math.exp(logMedian + body.sigma * rng.normal());
      let tailMs = 0;
      if (tail !== undefined && rng.next() < tail.probability) {
        tailMs = tail.scaleMs / Math.pow(1 - rng.next(), 1 / tail.shape);
      }
      const serviceMs = Math.min(maxMs, bodyMs + tailMs);
      const queueMs = Math.min(maxMs, gatewayQueueMs(nowMs));
      return { queueMs, bodyMs, tailMs, serviceMs, totalMs: queueMs + serviceMs };
    },
  };
}
