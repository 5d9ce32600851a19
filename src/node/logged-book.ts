import type { LimitListener } from "../engine/limit-listener.js";
import { LatencyBook } from "../estimate/latency-book.js";
import type { LatencyBookOptions } from "../estimate/options.js";
import type { InFlight, PeerId } from "../estimate/types.js";

/**
 * The node's LatencyBook: a call begun while its peer is past `estimator.maxInFlightPerPeer` reports that limit
 * (the node's `LimitLog` rate-limits it, one line a second at most). Such a call still counts as censored
 * while out, at the age of the youngest untracked one (`InFlightRegistry`).
 *
 * @example
 * const book = new LoggedLatencyBook(config.estimator, (limit, fields) => limits.report(limit, fields));
 */
export class LoggedLatencyBook extends LatencyBook {
  constructor(
    options: Partial<LatencyBookOptions>,
    private readonly onLimit: LimitListener,
  ) {
    super(options);
  }

  override begin(peer: PeerId, nowMs: number, deadlineMs?: number): InFlight {
    const call = super.begin(peer, nowMs, deadlineMs);
    const p = this.peerOf(peer);
    if (p.untrackedInFlight > 0) {
      this.onLimit("estimator.maxInFlightPerPeer", {
        peer,
        inFlight: p.inFlightCount,
        max: this.options.maxInFlightPerPeer,
      });
    }
    return call;
  }
}
