/**
 * Per-peer latency estimate gauges — p50, p99, sample count, censored calls, estimate age and
 * freshness — read from the estimator in one batch callback when a reader collects. Nothing is
 * recorded per latency sample.
 */
import { ValueType } from "@opentelemetry/api";
import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { PeerEstimate, PeerId } from "../estimate/types.js";
import { ATTR } from "./attributes.js";

/**
 * What the gauges read: the estimator's per-peer view (src/estimate's LatencyBook satisfies it).
 */
export interface EstimateSource {
  /** Peers the estimator tracks. */
  peers(): Iterable<PeerId>;
  /** The estimate of `peer` at time `now` (the engine's clock, ms). */
  estimate(peer: PeerId, now: number): PeerEstimate;
}

/** Names of the per-peer gauges. */
export const PEER_METRIC = {
  p50: "tailswarm.peer.latency.p50",
  p99: "tailswarm.peer.latency.p99",
  samples: "tailswarm.peer.latency.samples",
  censored: "tailswarm.peer.latency.censored",
  age: "tailswarm.peer.estimate.age",
  fresh: "tailswarm.peer.estimate.fresh",
} as const;

/** Registers the gauges on `meter`; the callback reads `source` (none: no observations). */
export class PeerEstimateGauges {
  #source: EstimateSource | undefined;
  readonly #meter: Meter;
  readonly #clock: Clock;
  readonly #attrs = new Map<PeerId, Attributes>();
  readonly #observables: Observable[];
  readonly #callback: (r: BatchObservableResult) => void;

  constructor(meter: Meter, clock: Clock, source?: EstimateSource) {
    this.#meter = meter;
    this.#clock = clock;
    this.#source = source;
    const p50 = meter.createObservableGauge(PEER_METRIC.p50, {
      description: "Windowed p50 latency of the peer (completed and censored samples)",
      unit: "ms",
    });
    const p99 = meter.createObservableGauge(PEER_METRIC.p99, {
      description: "Windowed p99 latency of the peer (completed and censored samples)",
      unit: "ms",
    });
    const samples = meter.createObservableGauge(PEER_METRIC.samples, {
      description: "Completed latency samples in the peer's window",
      unit: "{sample}",
      valueType: ValueType.INT,
    });
    const censored = meter.createObservableGauge(PEER_METRIC.censored, {
      description: "Calls in flight counted as right-censored samples",
      unit: "{call}",
      valueType: ValueType.INT,
    });
    const age = meter.createObservableGauge(PEER_METRIC.age, {
      description: "Time since the peer's newest sample",
      unit: "ms",
    });
    const fresh = meter.createObservableGauge(PEER_METRIC.fresh, {
      description: "1 when the peer's estimate is fresh, 0 when unknown (stale or under-sampled)",
      unit: "1",
      valueType: ValueType.INT,
    });
    this.#observables = [p50, p99, samples, censored, age, fresh];
    this.#callback = (r) => {
      const src = this.#source;
      if (src === undefined) return;
      const now = this.#clock.now();
      for (const peer of src.peers()) {
        const e = src.estimate(peer, now);
        const a = this.#attrsOf(peer);
        if (Number.isFinite(e.p50Ms)) r.observe(p50, e.p50Ms, a);
        if (Number.isFinite(e.p99Ms)) r.observe(p99, e.p99Ms, a);
        r.observe(samples, e.samples, a);
        r.observe(censored, e.censored, a);
        if (Number.isFinite(e.ageMs)) r.observe(age, e.ageMs, a);
        r.observe(fresh, e.status === "fresh" ? 1 : 0, a);
      }
    };
    meter.addBatchObservableCallback(this.#callback, this.#observables);
  }

  setSource(source: EstimateSource | undefined): void {
    this.#source = source;
  }

  close(): void {
    this.#meter.removeBatchObservableCallback(this.#callback, this.#observables);
  }

  #attrsOf(peer: PeerId): Attributes {
    let a = this.#attrs.get(peer);
    if (a === undefined) {
      if (this.#attrs.size > 10_000) this.#attrs.clear();
      a = Object.freeze({ [ATTR.peer]: peer });
      this.#attrs.set(peer, a);
    }
    return a;
  }
}
