/**
 * A `PeerView` over static seed addresses and DNS names, kept by probing: every `intervalMs` each
 * address gets a `Probe` (deadline `timeoutMs`); `failureThreshold` failures in a row mark it down, one
 * success marks it up. The Probe reply names the peer (node id) and its start time: a new start time
 * is a restart, and a restart resets the peer's estimates. The region comes
 * from `State`. DNS names are re-resolved every `dnsIntervalMs` (each A/AAAA record is a peer).
 *
 * Used by the daemon until src/mesh ships its own membership; it needs only a ChannelPool.
 */
import { lookup } from "node:dns/promises";
import { Metadata } from "@grpc/grpc-js";
import type { ChannelPool } from "../mesh/channel-pool.js";
import { swarmService } from "../mesh/proto.js";
import type { WireProbeReply, WireStateReply } from "../mesh/proto.js";
import type { Logger } from "./logger.js";
import type { PeerInfo, PeerView } from "./peer-view.js";

export interface ProbeMembershipOptions {
  readonly selfId: string;
  readonly pool: ChannelPool;
  readonly peers: readonly string[];
  readonly dns: readonly string[];
  readonly dnsIntervalMs: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly failureThreshold: number;
  readonly log: Logger;
}

interface Entry {
  readonly address: string;
  id: string | undefined;
  region: string;
  up: boolean;
  failures: number;
  startedAt: number | undefined;
  restarts: number;
  probing: boolean;
}

function unary<Req, Res>(
  pool: ChannelPool,
  address: string,
  method: "Probe" | "State",
  request: Req,
  timeoutMs: number,
): Promise<Res> {
  const m = swarmService()[method];
  return new Promise((resolve, reject) => {
    pool
      .get(address)
      .makeUnaryRequest(
        m.path,
        m.requestSerialize as (v: Req) => Buffer,
        m.responseDeserialize as (b: Buffer) => Res,
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, reply) =>
          err || reply === undefined ? reject(err ?? new Error("empty reply")) : resolve(reply),
      );
  });
}

export function createProbeMembership(o: ProbeMembershipOptions): PeerView {
  const entries = new Map<string, Entry>();
  const listeners = new Set<(peer: string) => void>();
  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  const log = o.log;

  const add = (address: string): void => {
    if (entries.has(address)) return;
    entries.set(address, {
      address,
      id: undefined,
      region: "",
      up: false,
      failures: 0,
      startedAt: undefined,
      restarts: 0,
      probing: false,
    });
    log.debug("peer address added", { address });
  };
  for (const a of o.peers) add(a);

  const reset = (id: string): void => {
    for (const l of listeners) l(id);
  };

  const probe = async (e: Entry): Promise<void> => {
    if (e.probing || closed) return;
    e.probing = true;
    try {
      const reply = await unary<{ sentUnixMs: number }, WireProbeReply>(
        o.pool,
        e.address,
        "Probe",
        { sentUnixMs: Date.now() },
        o.timeoutMs,
      );
      if (closed) return;
      const restarted = e.startedAt !== undefined && reply.startedAtUnixMs !== e.startedAt;
      if (restarted) e.restarts++;
      e.id = reply.nodeId;
      e.startedAt = reply.startedAtUnixMs;
      e.failures = 0;
      if (!e.up || restarted) {
        e.up = true;
        if (e.id !== o.selfId) {
          log.info(restarted ? "peer restarted" : "peer up", { peer: e.id, address: e.address });
          const state = await unary<Record<string, never>, WireStateReply>(
            o.pool,
            e.address,
            "State",
            {},
            o.timeoutMs,
          ).catch(() => undefined);
          if (state !== undefined) e.region = state.region;
          // Only a restart drops the estimates: a peer that was slow to answer probes is still the
          // same peer, and its slowness is exactly the tail the estimates must keep.
          if (restarted) reset(e.id);
        }
      }
    } catch (err) {
      if (closed) return;
      e.failures++;
      if (e.up && e.failures >= o.failureThreshold) {
        e.up = false;
        log.warn("peer down", {
          peer: e.id,
          address: e.address,
          failures: e.failures,
          error: (err as Error).message,
        });
      } else {
        log.debug("probe failed", {
          address: e.address,
          failures: e.failures,
          error: (err as Error).message,
        });
      }
    } finally {
      e.probing = false;
    }
  };

  const probeAll = (): void => {
    for (const e of entries.values()) void probe(e);
  };

  const resolveDns = async (): Promise<void> => {
    const seen = new Set<string>(o.peers);
    for (const name of o.dns) {
      const colon = name.lastIndexOf(":");
      const host = name.slice(0, colon);
      const port = name.slice(colon + 1);
      try {
        const records = await lookup(host, { all: true });
        for (const r of records) seen.add(r.family === 6 ? `[${r.address}]:${port}` : `${r.address}:${port}`);
      } catch (err) {
        log.warn("dns lookup failed", { name, error: (err as Error).message });
        // Keep the addresses this name had: a failed lookup is not proof that the peers left.
        for (const a of entries.keys()) seen.add(a);
      }
    }
    if (closed) return;
    for (const a of seen) add(a);
    for (const a of [...entries.keys()]) {
      if (!seen.has(a)) {
        entries.delete(a);
        log.info("peer address removed (not in DNS)", { address: a });
      }
    }
  };

  const byId = (): Map<string, Entry> => {
    const m = new Map<string, Entry>();
    for (const e of entries.values()) {
      if (e.id === undefined || e.id === o.selfId) continue;
      const prev = m.get(e.id);
      if (prev === undefined || (!prev.up && e.up)) m.set(e.id, e);
    }
    return m;
  };

  return {
    live: () =>
      [...byId().values()]
        .filter((e) => e.up)
        .map((e) => e.id!)
        .sort(),
    addressOf: (peer) => byId().get(peer)?.address,
    all: (): PeerInfo[] =>
      [...entries.values()]
        .filter((e) => e.id !== o.selfId)
        .map((e) => ({
          id: e.id ?? "",
          address: e.address,
          region: e.region,
          up: e.up,
          restarts: e.restarts,
        })),
    onReset: (l) => void listeners.add(l),
    start() {
      if (o.dns.length > 0) {
        void resolveDns().then(probeAll);
        timers.push(setInterval(() => void resolveDns(), o.dnsIntervalMs).unref());
      }
      probeAll();
      timers.push(setInterval(probeAll, o.intervalMs).unref());
    },
    close() {
      closed = true;
      for (const t of timers) clearInterval(t);
    },
  };
}
