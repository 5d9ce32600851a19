import { SamplingDecision } from "@opentelemetry/sdk-trace";
import type { Sampler, SamplingResult } from "@opentelemetry/sdk-trace";
import { checkRange } from "../../util/range.js";
import { TRACES_PER_SECOND_RANGE } from "../sampler-defaults.js";

const SAMPLED: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const DROPPED: SamplingResult = { decision: SamplingDecision.NOT_RECORD };

/**
 * Samples at most `tracesPerSecond` new traces per second: a token bucket that refills at that rate
 * and holds at most one second's worth (at least one token), so a burst after a quiet spell is traced
 * too. Below that rate every trace is sampled; above it, the cost of tracing stays bounded however
 * many fan-outs the node runs.
 *
 * The node's default root sampler, under a parent-based sampler (a child of a sampled caller is always
 * sampled, so a trace across hops is never cut in the middle): a swarm node at agent-swarm rates —
 * a few fan-outs per second — has a trace of every decision, and one driven at hundreds of fan-outs per
 * second traces a steady few of them (the flight recorder and the metrics still see all of them).
 * The same idea as Jaeger's `ratelimiting` sampler and X-Ray's per-second reservoir.
 *
 * @example
 * new TracerProvider({ sampler: new ParentBasedSampler({ root: new RateLimitingSampler(10) }) });
 */
export class RateLimitingSampler implements Sampler {
  /** New traces per second. */
  readonly rate: number;
  /** The same, per ms. */
  readonly #perMs: number;
  readonly #capacity: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;
  #sampled = 0;
  #dropped = 0;

  /** `now`: a monotonic clock in ms (default `performance.now`), for tests. */
  constructor(tracesPerSecond: number, now: () => number = () => performance.now()) {
    this.rate = checkRange("telemetry.tracesPerSecond", tracesPerSecond, TRACES_PER_SECOND_RANGE);
    this.#perMs = tracesPerSecond / 1000;
    this.#capacity = Math.max(1, tracesPerSecond);
    this.#now = now;
    this.#tokens = tracesPerSecond === 0 ? 0 : this.#capacity;
    this.#last = now();
  }

  shouldSample(): SamplingResult {
    if (this.declines()) return DROPPED;
    this.#tokens -= 1;
    this.#sampled++;
    return SAMPLED;
  }

  /**
   * True when a new trace asked for now would not be started, and then counts it as not started, as
   * `shouldSample` would; false leaves the token for the `shouldSample` call that follows. A tracer
   * that knows this sampler decides its roots asks first, and starts no span when it declines
   * (FanoutTracer's `sampling.declinesRoot`).
   */
  declines(): boolean {
    const t = this.#now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + (t - this.#last) * this.#perMs);
    this.#last = t;
    if (this.#tokens >= 1) return false;
    this.#dropped++;
    return true;
  }

  /** New traces started and not started since construction (the node exports them as a metric). */
  get counts(): { readonly sampled: number; readonly dropped: number } {
    return { sampled: this.#sampled, dropped: this.#dropped };
  }

  toString(): string {
    return `RateLimitingSampler{${this.rate}/s}`;
  }
}
