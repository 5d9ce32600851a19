/**
 * The node's peer health (`health.*` keys): src/mesh's `PeerHealth` fed by the coordinator's branch
 * records, reading each peer's fresh p99 from the LatencyBook (a lower-bound p99 is not a p99 to
 * compare against), logging each ejection, return and refusal on the `health` logger. `healthy`
 * keeps ejected peers out of the node's fan-outs. Each is also counted in OTel (HealthMetrics).
 */
import type { LatencyBook } from "../estimate/latency-book.js";
import { PeerHealth } from "../mesh/membership/health.js";
import type { Membership } from "../mesh/membership/membership.js";
import { HealthMetrics } from "../telemetry/health-metrics.js";
import type { NodeConfig } from "./config/types.js";
import type { Logger } from "./logger.js";

export interface NodeHealthDeps {
  readonly book: Pick<LatencyBook, "tracks" | "estimate">;
  readonly log: Logger;
  /** Default: on the global meter. */
  readonly metrics?: HealthMetrics;
}

export function createNodeHealth(config: NodeConfig["health"], deps: NodeHealthDeps): PeerHealth {
  const log = deps.log.child("health");
  const metrics = deps.metrics ?? new HealthMetrics();
  const health = new PeerHealth({
    ...config,
    p99Of: (peer) => {
      if (!deps.book.tracks(peer)) return NaN;
      const e = deps.book.estimate(peer, Date.now());
      return e.p99Kind === "lower-bound" ? NaN : e.p99Ms;
    },
  });
  health.onEject = (e) => {
    metrics.ejected(e.cause);
    log.warn("peer ejected", {
      peer: e.peer,
      cause: e.cause,
      ejections: e.ejections,
      forMs: e.untilMs - Date.now(),
    });
  };
  health.onReturn = (peer, ejections) => {
    metrics.returned();
    log.info("peer returned", { peer, ejections });
  };
  health.onRefused = (peer, cause) => {
    metrics.refused(cause);
    log.warn("ejection refused: health.maxEjectedPercent of peers already out", {
      peer,
      cause,
      maxEjectedPercent: config.maxEjectedPercent,
    });
  };
  return health;
}

/** `peers.live()` without the peers `health` has ejected. */
export function healthy(peers: Pick<Membership, "live">, health: PeerHealth): Pick<Membership, "live"> {
  return { live: () => health.filter(peers.live(), Date.now()) };
}
