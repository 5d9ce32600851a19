/**
 * The latency book as its readers see it: `LatencyBook` implements it, and each reader takes the part
 * it needs (`Pick<LatencySource, ...>`): the engine all of it, a router the per-peer estimates, the
 * telemetry gauges the peers and their estimates. A test or the testbed can hand in a fake or a wrapper.
 */
import type { ObservedFanout } from "./observed-fanouts.js";
import type { FanoutEstimate, InFlight, PeerEstimate, PeerId, Requirement } from "./types.js";

export interface LatencySource {
  /** Peers the book tracks. */
  peers(): Iterable<PeerId>;
  /** The estimate of `peer` at `now` (the engine's clock, ms). */
  estimate(peer: PeerId, now: number): PeerEstimate;
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
