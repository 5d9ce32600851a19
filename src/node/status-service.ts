/**
 * `tailswarm.v1.NodeStatus/Status`: the node, its load, its coordinator's decisions by mode, and its
 * view of every peer (up/down, fresh p50/p99, samples, estimate age) — or of the peers the request
 * names, or none: a row per address is O(swarm size) per reply, so pollers of a large swarm ask for
 * the counts (`peers_known`, `peers_up`) or the rows they read.
 */
import type { sendUnaryData, Server, ServerUnaryCall } from "@grpc/grpc-js";
import type { Coordinator } from "../engine/coordinator.js";
import type { LatencyBook } from "../estimate/latency-book.js";
import type { SwarmServer } from "../mesh/server.js";
import { toServiceError } from "../mesh/status.js";
import type { NodeConfig } from "./config/types.js";
import type { Membership } from "../mesh/membership/membership.js";
import type { PeerHealth } from "../mesh/membership/health.js";
import type { EventLoopDelay } from "./event-loop-delay.js";
import { nodeStatusService } from "./status-proto.js";
import type { PeerStatus__Output } from "../mesh/gen/tailswarm/v1/PeerStatus.js";
import type { StatusReply__Output } from "../mesh/gen/tailswarm/v1/StatusReply.js";
import type { StatusRequest__Output } from "../mesh/gen/tailswarm/v1/StatusRequest.js";

/** Which peer rows a reply carries: every one (the default), those of `peerIds`, or none. */
export type StatusRows = Pick<StatusRequest__Output, "peerIds" | "omitPeers">;

const EVERY_ROW: StatusRows = { peerIds: [], omitPeers: false };

export interface StatusDeps {
  readonly config: NodeConfig;
  readonly server: SwarmServer;
  readonly coordinator: Coordinator;
  readonly book: LatencyBook;
  readonly membership: Pick<Membership, "live" | "peers" | "probesSent">;
  readonly health: Pick<PeerHealth, "ejected" | "lastBadBranchMs">;
  readonly listen: string;
  /** The process's event-loop delay monitor (absent: NaN). */
  readonly loop?: EventLoopDelay;
}

export function nodeStatus(d: StatusDeps, rows: StatusRows = EVERY_ROW): StatusReply__Output {
  const now = Date.now();
  const s = d.server.state();
  const stats = d.coordinator.stats();
  const known = d.membership.peers();
  const only = rows.peerIds.length > 0 ? new Set(rows.peerIds) : undefined;
  const shown = rows.omitPeers ? [] : only === undefined ? known : known.filter((p) => only.has(p.id));
  const peers: PeerStatus__Output[] = shown.map((p) => {
    const e = p.id === "" ? undefined : d.book.estimate(p.id, now);
    return {
      peerId: p.id,
      address: p.address,
      region: p.region,
      up: p.up,
      estimateStatus: e?.status ?? "unknown",
      unknownReason: e?.reason ?? (e === undefined ? "never-sampled" : ""),
      p50Ms: e?.p50Ms ?? NaN,
      p99Ms: e?.p99Ms ?? NaN,
      samples: e?.samples ?? 0,
      censored: e?.censored ?? 0,
      estimateAgeMs: e === undefined || !Number.isFinite(e.ageMs) ? -1 : e.ageMs,
      restarts: p.restarts,
      p50Kind: e === undefined || e.status === "unknown" ? "unknown" : (e.p50Kind ?? "known"),
      p99Kind: e === undefined || e.status === "unknown" ? "unknown" : (e.p99Kind ?? "known"),
      horizonMs: e?.horizonMs !== undefined && Number.isFinite(e.horizonMs) ? e.horizonMs : -1,
      lastBadBranchUnixMs: p.id === "" ? -1 : Math.max(-1, d.health.lastBadBranchMs(p.id)),
    };
  });
  const live = d.membership.live();
  const loop = d.loop?.read();
  return {
    nodeId: s.nodeId,
    region: s.region,
    version: s.version,
    startedAtUnixMs: s.startedAt,
    uptimeMs: now - s.startedAt,
    kinds: [...s.kinds],
    queueDepth: s.queueDepth,
    inFlight: s.inFlight,
    capacity: s.capacity,
    coordinating: s.coordinating,
    draining: s.draining,
    policy: d.config.policy,
    eventLoopDelayP50Ms: loop?.p50Ms ?? NaN,
    eventLoopDelayP99Ms: loop?.p99Ms ?? NaN,
    eventLoopDelayMaxMs: loop?.maxMs ?? NaN,
    fanouts: stats.fanouts,
    decisions: { ...stats.byMode },
    violations: stats.violations,
    abandonCostMs:
      live.length === 0 ? 0 : d.coordinator.ledgers.of(d.config.policy).expectedAbandonCostMs(live, now),
    abandonCostMsByPolicy: Object.fromEntries(
      d.coordinator.ledgers
        .made()
        .map(([policy, ledger]) => [policy, live.length === 0 ? 0 : ledger.expectedAbandonCostMs(live, now)]),
    ),
    peers,
    probesSent: d.membership.probesSent,
    ejectedPeers: d.health.ejected(now),
    activePeers: d.book.activeSet().size,
    peersKnown: known.length,
    peersUp: known.filter((p) => p.up).length,
  };
}

export function addStatusService(server: Server, status: (rows: StatusRows) => StatusReply__Output): void {
  server.addService(nodeStatusService(), {
    Status: (
      call: ServerUnaryCall<StatusRequest__Output, StatusReply__Output>,
      cb: sendUnaryData<StatusReply__Output>,
    ) => {
      try {
        cb(null, status(call.request));
      } catch (err) {
        cb(toServiceError(err, "status"));
      }
    },
  });
}
