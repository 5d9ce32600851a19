/**
 * Per-peer latency estimate gauges — p50, p99, sample count, censored calls, estimate age and
 * freshness — read from the estimator in one batch callback when a reader collects. Nothing is
 * recorded per latency sample.
 */
import { ValueType } from "@opentelemetry/api";
import type { BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { LatencySource } from "../estimate/latency-source.js";
import { PerPeerGauges } from "./per-peer-gauges.js";

/** What the gauges read: the peers of a latency book and their estimates. */
export type EstimateSource = Pick<LatencySource, "peers" | "estimate">;

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
export class PeerEstimateGauges extends PerPeerGauges<EstimateSource> {
  readonly #p50: Observable;
  readonly #p99: Observable;
  readonly #samples: Observable;
  readonly #censored: Observable;
  readonly #age: Observable;
  readonly #fresh: Observable;

  constructor(meter: Meter, clock: Clock, source?: EstimateSource) {
    super(meter, clock, source);
    this.#p50 = meter.createObservableGauge(PEER_METRIC.p50, {
      description: "Windowed p50 latency of the peer (completed and censored samples)",
      unit: "ms",
    });
    this.#p99 = meter.createObservableGauge(PEER_METRIC.p99, {
      description: "Windowed p99 latency of the peer (completed and censored samples)",
      unit: "ms",
    });
    this.#samples = meter.createObservableGauge(PEER_METRIC.samples, {
      description: "Completed latency samples in the peer's window",
      unit: "{sample}",
      valueType: ValueType.INT,
    });
    this.#censored = meter.createObservableGauge(PEER_METRIC.censored, {
      description: "Calls in flight counted as right-censored samples",
      unit: "{call}",
      valueType: ValueType.INT,
    });
    this.#age = meter.createObservableGauge(PEER_METRIC.age, {
      description: "Time since the peer's newest sample",
      unit: "ms",
    });
    this.#fresh = meter.createObservableGauge(PEER_METRIC.fresh, {
      description: "1 when the peer's estimate is fresh, 0 when unknown (stale or under-sampled)",
      unit: "1",
      valueType: ValueType.INT,
    });
    this.register([this.#p50, this.#p99, this.#samples, this.#censored, this.#age, this.#fresh]);
  }

  protected observe(r: BatchObservableResult, src: EstimateSource, now: number): void {
    for (const peer of src.peers()) {
      const e = src.estimate(peer, now);
      const a = this.attrsOf(peer);
      if (Number.isFinite(e.p50Ms)) r.observe(this.#p50, e.p50Ms, a);
      if (Number.isFinite(e.p99Ms)) r.observe(this.#p99, e.p99Ms, a);
      r.observe(this.#samples, e.samples, a);
      r.observe(this.#censored, e.censored, a);
      if (Number.isFinite(e.ageMs)) r.observe(this.#age, e.ageMs, a);
      r.observe(this.#fresh, e.status === "fresh" ? 1 : 0, a);
    }
  }
}
