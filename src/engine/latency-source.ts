/**
 * What the engine needs from src/estimate's `LatencyBook`, as a structural interface: the engine
 * depends on these three methods only, so a test or the testbed can hand in a fake or a wrapper.
 */
import type { ObservedFanout } from "../estimate/observed-fanouts.js";
import type { FanoutEstimate, InFlight, PeerEstimate, PeerId, Requirement } from "../estimate/types.js";

/** Fresh per-peer estimates (what a router may look at). */
export interface PeerEstimateSource {
  estimate(peer: PeerId, now: number): PeerEstimate;
}

/** Step 4 and step 9: fan-out quantiles in, latency samples (censored while in flight) out. */
export interface LatencySource extends PeerEstimateSource {
  /** A call to `peer` starts now; it is a right-censored sample until one of its ends is called. */
  begin(peer: PeerId, now: number, deadline: number): InFlight;
  /**
   * A fan-out to `peers` is issued now: the handle learns when its requirement was met (each branch's end
   * is reported to it), so `fanout` can use the set's observed completion time. Optional.
   */
  beginFanout?(
    peers: readonly PeerId[],
    requirement: Requirement,
    now: number,
    deadline: number,
  ): ObservedFanout | undefined;
  /** p50/p99 of the time until the required set of `peers` has answered. */
  fanout(peers: readonly PeerId[], requirement: Requirement, now: number): FanoutEstimate;
  /** The estimator's minimum sample count (LatencyBook has it); sizes the engine's measurement threshold. */
  readonly options?: { readonly minSamples: number };
}
