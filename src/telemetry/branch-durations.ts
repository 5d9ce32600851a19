/**
 * `tailswarm.branch.duration`: the latency of every branch that completed (an answer arrived, in time
 * or as a late horizon probe or measurement branch), per peer, as a histogram that a backend can
 * aggregate across nodes and windows — which the estimator's p50/p99 gauges cannot be. A branch cut at
 * its deadline or abandoned is not in it: its latency is only known to exceed its age (right-censored),
 * and `tailswarm.branch.outcomes` counts it. Values are queued and recorded in batches (see metrics.ts).
 */
import { ROOT_CONTEXT } from "@opentelemetry/api";
import type { Attributes, Histogram, Meter } from "@opentelemetry/api";
import type { BranchRecord } from "../engine/outcome.js";
import { PeerAttributes } from "./peer-attributes.js";

export const BRANCH_DURATION = "tailswarm.branch.duration";

/** Seconds: loopback answers of a millisecond to stalls of tens of seconds. */
export const SECONDS_BUCKETS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10, 30,
];

/** Branch durations queued before they are recorded. */
const BATCH = 256;

export class BranchDurations {
  readonly #histogram: Histogram;
  readonly #peers = new PeerAttributes();
  readonly #values = new Float64Array(BATCH);
  readonly #attrs: Attributes[] = [];

  constructor(meter: Meter) {
    this.#histogram = meter.createHistogram(BRANCH_DURATION, {
      description:
        "Issue to answer of branches that completed, by peer (cut and abandoned branches are censored: not here)",
      unit: "s",
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
  }

  /** Queues a settled branch's duration when it completed. */
  add(b: BranchRecord): void {
    if (b.result.kind !== "answer" || !(b.latencyMs >= 0)) return;
    this.#values[this.#attrs.length] = b.latencyMs / 1000;
    this.#attrs.push(this.#peers.of(b.peer));
    if (this.#attrs.length === BATCH) this.record();
  }

  /** Records what is queued (no trace context: a batch is not the branch's). */
  record(): void {
    const n = this.#attrs.length;
    for (let k = 0; k < n; k++) this.#histogram.record(this.#values[k]!, this.#attrs[k], ROOT_CONTEXT);
    this.#attrs.length = 0;
  }
}
