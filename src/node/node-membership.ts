/**
 * The node's membership: src/mesh's `Membership` over the node's `peers` (static seeds), `dns`
 * names and `probe.*` keys, sharing the node's `ChannelPool` with its `GrpcTransport` (one channel
 * per peer). Peers are keyed by node id everywhere — membership, the LatencyBook, the transport's
 * `addressOf` and `status` — so a peer's samples, its address and its status row are one peer.
 * A restart (new start time) resets the peer's estimates; an id whose last address left every
 * source is forgotten. Branch outcomes are the health signal: an identified peer is actively probed
 * only while it is in the active set and idle (no branch outcome for the estimator's
 * `maxSampleAgeMs`) or suspected (`PeerHealth.needsProbe`), at a backoff up to
 * `probe.suspectBackoffMaxMs` (`SuspectBackoff`); a suspected one also at once on its first bad branch.
 *
 * @example
 * const membership = createNodeMembership(config, { pool, book, health, log });
 * const transport = new GrpcTransport({ pool, addressOf: (id) => membership.addressOf(id) });
 * void membership.start();
 */
import { status } from "@grpc/grpc-js";
import type { LatencyBook } from "../estimate/latency-book.js";
import type { ChannelPool } from "../mesh/channel-pool.js";
import type { PeerHealth } from "../mesh/membership/health.js";
import { Membership } from "../mesh/membership/membership.js";
import { SuspectBackoff } from "../mesh/membership/suspect-backoff.js";
import type { NodeConfig } from "./config/types.js";
import type { Logger } from "./logger.js";

export interface NodeMembershipDeps {
  readonly pool: ChannelPool;
  readonly book: Pick<LatencyBook, "reset" | "forget" | "tracks" | "options">;
  /**
   * Branch outcomes: an active-set peer is probed only while they say too little — none for the
   * estimator's `maxSampleAgeMs` (the age past which its samples count as stale), or it is suspected.
   */
  readonly health: Pick<PeerHealth, "needsProbe" | "suspected" | "report" | "onSuspect" | "forget">;
  /** The node's logger; membership lines go to its `membership` child, resets to `node`. */
  readonly log: Logger;
}

/** Membership targets of the config: each seed as a bare `host:port`, each DNS name as `dns:///`. */
export function membershipTargets(config: Pick<NodeConfig, "peers" | "dns">): string[] {
  return [...config.peers, ...config.dns.map((name) => `dns:///${name}`)];
}

export function createNodeMembership(config: NodeConfig, deps: NodeMembershipDeps): Membership {
  const log = deps.log.child("membership");
  const nodeLog = deps.log.child("node");
  const suspects = new SuspectBackoff({
    intervalMs: config.probe.intervalMs,
    backoffMaxMs: config.probe.suspectBackoffMaxMs,
    // logged for a suspect only: an idle peer reaches the cap in every idle spell, which is routine
    onCapped: (peer, waitMs) => {
      if (deps.health.suspected(peer))
        log.info("suspected peer probed at probe.suspectBackoffMaxMs", { peer, waitMs });
    },
  });
  const membership = new Membership({
    sources: membershipTargets(config),
    pool: deps.pool,
    selfId: config.nodeId,
    probeIntervalMs: config.probe.intervalMs,
    probeTimeoutMs: config.probe.timeoutMs,
    failureThreshold: config.probe.failureThreshold,
    probeBackoffMaxMs: config.probe.backoffMaxMs,
    refreshMs: config.dnsIntervalMs,
    subsetSize: config.membership.subsetSize,
    channelIdleMs: config.membership.channelIdleMs,
    active: (id) => deps.book.tracks(id),
    // An idle peer is probed at the same backoff as a suspected one: probed every round, a node that
    // coordinates less often than its window (or not at all for a while) would probe its whole active
    // set each round, a cost that grows with the swarm. Its wait starts over once its branches answer
    // for it again.
    wantsProbe: (id) => {
      const now = Date.now();
      const needs = deps.book.tracks(id) && deps.health.needsProbe(id, now, deps.book.options.maxSampleAgeMs);
      return suspects.due(id, now, needs) && needs;
    },
  });
  // A refused probe is a bad outcome like a failed branch (a success says nothing of the branch path,
  // so it resets nothing); a peer whose branch just failed is probed at once. A dead peer is then out
  // of fan-outs about one probe round after its first failed branch, not failureThreshold branches.
  // A probe past its deadline is no failure here, as a branch cut at its deadline is none: on a loaded
  // machine probes time out, and counting them ejected healthy peers and drew more probes.
  membership.on("probeFailed", (p, code) => {
    if (code === status.DEADLINE_EXCEEDED) return;
    suspects.refused(p.id);
    deps.health.report(p.id, { kind: "failed" }, Date.now(), true);
  });
  deps.health.onSuspect = (peer) => {
    // A run of bad branches starts its own backoff (1, 2, 4 … s), not the idle one it may be at the cap of.
    suspects.forget(peer);
    suspects.sent(peer, Date.now());
    membership.probePeer(peer);
  };
  membership.on("up", (p) => log.info("peer up", { peer: p.id, address: p.address, region: p.region }));
  membership.on("down", (p) =>
    log.warn("peer down", {
      peer: p.id,
      address: p.address,
      failures: p.consecutiveFailures,
      error: p.lastError,
    }),
  );
  membership.on("restarted", (p) => {
    log.info("peer restarted", { peer: p.id, address: p.address, restarts: p.restarts });
    // Only a restart drops the estimates: a peer slow to answer probes is still the same peer, and
    // its slowness is exactly the tail the estimates must keep.
    deps.book.reset(p.id);
    // A new process: the old one's failures (its death, the probes that saw it) are not this one's.
    deps.health.forget(p.id);
    suspects.forget(p.id);
    nodeLog.info("estimates reset", { peer: p.id });
  });
  membership.on("removed", (p) => {
    log.info("peer address removed", { peer: p.id, address: p.address });
    if (p.id !== "" && membership.addressOf(p.id) === undefined) {
      deps.book.forget(p.id);
      suspects.forget(p.id);
    }
  });
  return membership;
}
