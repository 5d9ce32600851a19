/**
 * The estimator's view of each peer as gauges — the windowed p50 and p99 the rule decides with, the
 * completed and censored samples behind them, the estimate's age and freshness — read in one batch
 * callback when a reader collects: nothing is recorded per latency sample.
 */
import type { BatchObservableResult, Meter } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import type { LatencySource } from "../estimate/latency-source.js";
import { PerPeerGauges } from "./per-peer-gauges.js";
import type { PeerInstrument } from "./per-peer-gauges.js";

/** What the gauges read: the peers of a latency book and their estimates. */
export type EstimateSource = Pick<LatencySource, "peers" | "estimate">;

const GAUGES = {
  p50: {
    name: "tailswarm.branch.estimate.p50",
    description: "Windowed p50 branch latency to the peer (completed and censored samples)",
    unit: "s",
  },
  p99: {
    name: "tailswarm.branch.estimate.p99",
    description: "Windowed p99 branch latency to the peer (completed and censored samples)",
    unit: "s",
  },
  samples: {
    name: "tailswarm.branch.estimate.samples",
    description: "Completed latency samples in the peer's window",
    unit: "{sample}",
    int: true,
  },
  censored: {
    name: "tailswarm.branch.estimate.censored",
    description: "Calls in flight counted as right-censored samples",
    unit: "{call}",
    int: true,
  },
  age: {
    name: "tailswarm.branch.estimate.age",
    description: "Time since the peer's newest sample",
    unit: "s",
  },
  fresh: {
    name: "tailswarm.branch.estimate.fresh",
    description: "1 when the peer's estimate is fresh, 0 when unknown (stale or under-sampled)",
    unit: "1",
    int: true,
  },
} as const satisfies Record<string, PeerInstrument>;

/** Names of the per-peer estimate gauges. */
export const PEER_METRIC = Object.fromEntries(Object.entries(GAUGES).map(([k, v]) => [k, v.name])) as {
  readonly [K in keyof typeof GAUGES]: (typeof GAUGES)[K]["name"];
};

/** Registers the gauges on `meter`; the callback reads `source` (none: no observations). */
export class PeerEstimateGauges extends PerPeerGauges<EstimateSource, keyof typeof GAUGES> {
  constructor(meter: Meter, clock: Clock, source?: EstimateSource) {
    super(meter, clock, source, GAUGES);
  }

  protected observe(r: BatchObservableResult, src: EstimateSource, now: number): void {
    const g = this.instruments;
    for (const peer of src.peers()) {
      const e = src.estimate(peer, now);
      const a = this.attrsOf(peer);
      if (Number.isFinite(e.p50Ms)) r.observe(g.p50, e.p50Ms / 1000, a);
      if (Number.isFinite(e.p99Ms)) r.observe(g.p99, e.p99Ms / 1000, a);
      r.observe(g.samples, e.samples, a);
      r.observe(g.censored, e.censored, a);
      if (Number.isFinite(e.ageMs)) r.observe(g.age, e.ageMs / 1000, a);
      r.observe(g.fresh, e.status === "fresh" ? 1 : 0, a);
    }
  }
}
