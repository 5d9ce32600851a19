/**
 * Who is in the swarm and who is alive. Sources list addresses; `Probe` at an interval finds who
 * answers and which node id answers; `State` tells each peer's region. Peers are known by node id,
 * the one key the latency book, the transport (`addressOf`) and status share: `live()` lists each
 * id once even when two sources name it at two addresses (a static seed and a DNS record).
 *
 * A peer id is `up` while at least one of its addresses answers probes and `down` when the last one
 * missed `failureThreshold` probes in a row. A different `started_at` for the same id, at any of its
 * addresses, means it `restarted` (drop its latency estimates:
 * `membership.on("restarted", (p) => book.reset(p.id))`). Events are emitted only once the id is
 * known. Probes share the peers' channels (`ChannelPool`) with the transport: one channel per peer.
 *
 * @example
 * const m = new Membership({ sources: ["dns:///swarm.default.svc:7400"], pool, selfId: "a" });
 * m.on("restarted", (p) => book.reset(p.id));
 * const transport = new GrpcTransport({ pool, addressOf: (id) => m.addressOf(id) });
 * await m.start();
 * coordinator.fanOut(task, { peers: m.live(), ... });
 */
import { EventEmitter } from "node:events";
import { status } from "@grpc/grpc-js";
import { systemClock } from "../../clock/clock.js";
import type { Clock, TimerHandle } from "../../clock/clock.js";
import type { PeerId } from "../../estimate/types.js";
import { ChannelPool } from "../channel-pool.js";
import { swarmService } from "../proto.js";
import { unaryCall } from "../unary-call.js";
import { doubledWait, jittered } from "./backoff.js";
import { probeCall } from "./probe-call.js";
import type { ProbeReply__Output } from "../gen/tailswarm/v1/ProbeReply.js";
import type { StateReply__Output } from "../gen/tailswarm/v1/StateReply.js";
import { hash32 } from "../../util/hash.js";
import { checkRange, intRange } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";
import { createSource } from "./source.js";
import type { MembershipSource } from "./source.js";
import "./static-source.js";
import "./dns-source.js";

export interface PeerInfo {
  readonly address: string;
  /** Node id learned from the peer ("" until it first answered). */
  readonly id: PeerId;
  readonly region: string;
  /** This address answers probes. */
  readonly up: boolean;
  /** The peer's start time (epoch ms), 0 until known. */
  readonly startedAt: number;
  /** Restarts seen of this id (new start times) since this membership started. */
  readonly restarts: number;
  /** Round-trip time of the last probe, ms (NaN when none). */
  readonly rttMs: number;
  readonly consecutiveFailures: number;
  /** Last probe error, "" after a success. */
  readonly lastError: string;
}

/**
 * `up`/`down`: a peer id became live / stopped being live (its last answering address went
 * silent, or that address now answers with another id). `restarted`: the id has a new start time.
 * `removed`: an address left every source (the id may still be live at another address).
 */
export interface MembershipEvents {
  up: [PeerInfo];
  /** A probe of an identified peer failed (timed out, refused, or any error), with its gRPC status code. */
  probeFailed: [PeerInfo, status];
  down: [PeerInfo];
  restarted: [PeerInfo];
  removed: [PeerInfo];
}

export interface MembershipOptions {
  /** Targets (`dns:///name:port`, `static:///a:1,b:2`, `host:port`) or ready-made sources. */
  readonly sources: readonly (string | MembershipSource)[];
  /** Channels to share with the transport. Default: a private pool. */
  readonly pool?: ChannelPool;
  readonly clock?: Clock;
  /** This node's own id: an address that answers with it is not a peer. */
  readonly selfId?: string;
  /** Probe period per peer, ms, jittered ±20% per round. Defaults and ranges: MEMBERSHIP_DEFAULTS and MEMBERSHIP_RANGES. */
  readonly probeIntervalMs?: number;
  /** Deadline of one probe, ms. */
  readonly probeTimeoutMs?: number;
  /** Missed probes in a row that mark a peer down. */
  readonly failureThreshold?: number;
  /**
   * Longest wait between probes of an address that does not answer (not yet identified, or down), ms:
   * the wait starts at `probeIntervalMs` and doubles per unanswered probe up to this, jittered ±20%.
   */
  readonly probeBackoffMaxMs?: number;
  /** Re-resolve interval of DNS sources, ms. */
  readonly refreshMs?: number;
  /** Addresses this node probes (and so keeps channels to) beyond its active set: a deterministic subset. */
  readonly subsetSize?: number;
  /** A channel unused this long is closed, ms. */
  readonly channelIdleMs?: number;
  /** Peers this node is sending branches to (the active set): kept in the probed set, whatever the subset. */
  readonly active?: (id: PeerId) => boolean;
  /**
   * Whether an identified peer that is up needs an active probe this round (default: every one does).
   * Addresses not yet identified and addresses down are probed whatever it says (each at its backoff,
   * `probeBackoffMaxMs`): probes are how an address's node id is learned and how a down peer is seen back.
   */
  readonly wantsProbe?: (id: PeerId) => boolean;
}

type TimingKey =
  | "probeIntervalMs"
  | "probeTimeoutMs"
  | "failureThreshold"
  | "probeBackoffMaxMs"
  | "refreshMs"
  | "subsetSize"
  | "channelIdleMs";

export const MEMBERSHIP_DEFAULTS: Readonly<Record<TimingKey, number>> = {
  probeIntervalMs: 1_000,
  probeTimeoutMs: 500,
  failureThreshold: 3,
  probeBackoffMaxMs: 10_000,
  refreshMs: 5_000,
  subsetSize: 64,
  channelIdleMs: 60_000,
};

export const MEMBERSHIP_RANGES: Readonly<Record<TimingKey, NumberRange>> = {
  probeIntervalMs: intRange(10),
  probeTimeoutMs: intRange(1),
  failureThreshold: intRange(1, 100),
  probeBackoffMaxMs: intRange(10),
  refreshMs: intRange(100),
  subsetSize: intRange(1, 100_000),
  channelIdleMs: intRange(1_000),
};

function timing(options: MembershipOptions, key: TimingKey): number {
  return checkRange(`membership.${key}`, options[key] ?? MEMBERSHIP_DEFAULTS[key], MEMBERSHIP_RANGES[key]);
}

interface Entry {
  address: string;
  id: string;
  region: string;
  up: boolean;
  startedAt: number;
  rttMs: number;
  consecutiveFailures: number;
  lastError: string;
  self: boolean;
  /** While the address does not answer: the current wait between its probes (0 once it answers) and the next one's time. */
  backoffMs: number;
  nextProbeAt: number;
}

export class Membership extends EventEmitter<MembershipEvents> {
  readonly pool: ChannelPool;
  readonly #ownsPool: boolean;
  readonly #clock: Clock;
  readonly #sources: MembershipSource[];
  readonly #bySource = new Map<MembershipSource, string[]>();
  readonly #entries = new Map<string, Entry>();
  /** The entries of each identified node id (kept with `#setId`): lookups by id do not scan every address. */
  readonly #byId = new Map<PeerId, Set<Entry>>();
  /** Per node id: the start time last seen and the restarts counted (restart is a property of the id). */
  readonly #started = new Map<PeerId, number>();
  readonly #restarts = new Map<PeerId, number>();
  readonly #interval: number;
  readonly #timeout: number;
  readonly #threshold: number;
  readonly #backoffMaxMs: number;
  readonly #selfId: string | undefined;
  readonly #subsetSize: number;
  readonly #channelIdleMs: number;
  readonly #active: (id: PeerId) => boolean;
  readonly #wantsProbe: (id: PeerId) => boolean;
  #probes = 0;
  /** The entries in rendezvous order (see #probed); undefined after the address list changed. */
  #ranked: Entry[] | undefined;
  /** Entries with a probe in flight (a round skips them, `probePeer` too). */
  readonly #probing = new Set<Entry>();
  #timer: TimerHandle | undefined;
  #refreshTimers: TimerHandle[] = [];
  #running = false;
  #stopped = false;

  constructor(options: MembershipOptions) {
    super();
    this.pool = options.pool ?? new ChannelPool();
    this.#ownsPool = options.pool === undefined;
    this.#clock = options.clock ?? systemClock;
    const refreshMs = timing(options, "refreshMs");
    this.#sources = options.sources.map((s) => (typeof s === "string" ? createSource(s, { refreshMs }) : s));
    this.#interval = timing(options, "probeIntervalMs");
    this.#timeout = timing(options, "probeTimeoutMs");
    this.#threshold = timing(options, "failureThreshold");
    this.#backoffMaxMs = timing(options, "probeBackoffMaxMs");
    this.#selfId = options.selfId;
    this.#subsetSize = timing(options, "subsetSize");
    this.#channelIdleMs = timing(options, "channelIdleMs");
    this.#active = options.active ?? (() => false);
    this.#wantsProbe = options.wantsProbe ?? (() => true);
  }

  /**
   * Probes the addresses of peer `id` now, outside the rounds (those not already being probed): for a
   * peer whose branch just failed, so that it is confirmed down or cleared within a probe, not a round.
   */
  probePeer(id: PeerId): void {
    if (this.#stopped || id === "") return;
    for (const e of this.#byId.get(id) ?? []) {
      if (e.self || this.#probing.has(e)) continue;
      void this.#probe(e);
    }
  }

  /** Probes sent since this membership started (Probe calls; a first-contact State call not counted). */
  get probesSent(): number {
    return this.#probes;
  }

  /** Resolves every source and runs a first probe round; then probes and refreshes on timers. */
  async start(): Promise<void> {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    // every source resolved, then the list applied once: a node given N seeds is N sources, and
    // applying after each would rebuild the whole list N times (O(N²) per node start)
    await Promise.all(this.#sources.map((s) => this.#resolve(s)));
    if (!this.#running) return;
    this.#apply();
    for (const s of this.#sources) {
      if (s.refreshMs !== undefined) this.#scheduleRefresh(s, s.refreshMs);
    }
    await this.probeNow();
    this.#scheduleProbe();
  }

  /** Stops probing and refreshing for good; in-flight probes end without events. */
  stop(): void {
    this.#running = false;
    this.#stopped = true;
    this.#timer?.cancel();
    for (const t of this.#refreshTimers) t.cancel();
    this.#refreshTimers = [];
    if (this.#ownsPool) this.pool.closeAll();
  }

  /** Ids of the peers that are up, each once, sorted (never this node itself). */
  live(): PeerId[] {
    const ids = new Set<PeerId>();
    for (const e of this.#entries.values()) if (e.up && !e.self) ids.add(e.id);
    return [...ids].sort();
  }

  /** Address of a peer id (for `GrpcTransport`'s `addressOf`): an answering one when there is one. */
  addressOf(id: PeerId): string | undefined {
    if (id === "") return undefined;
    let any: string | undefined;
    for (const e of this.#byId.get(id) ?? []) {
      if (e.self) continue;
      if (e.up) return e.address;
      any ??= e.address;
    }
    return any;
  }

  /** Every known address but this node's own, with what is known of the peer behind it. */
  peers(): PeerInfo[] {
    return [...this.#entries.values()].filter((e) => !e.self).map((e) => this.#info(e));
  }

  /**
   * One probe round (also run on the interval) over this node's subset of the addresses and its
   * active set — of those, the addresses not yet identified or down whose backoff has run out, and
   * the peers `wantsProbe` asks for (asked only of peers with no probe in flight: a yes sends one);
   * then channels idle past `channelIdleMs` are closed.
   */
  async probeNow(): Promise<void> {
    if (this.#stopped) return;
    const now = this.#clock.now();
    const due = this.#probed().filter(
      (e) =>
        !e.self &&
        !this.#probing.has(e) &&
        (e.id === "" || !e.up ? now >= e.nextProbeAt : this.#wantsProbe(e.id)),
    );
    await Promise.all(due.map((e) => this.#probe(e)));
    if (!this.#stopped) this.pool.closeIdle(this.#channelIdleMs);
  }

  /**
   * Rendezvous subsetting: each address ranked by a hash of (this node, address), the first
   * `subsetSize` kept, so every node probes a different, stable subset and an address joining or
   * leaving moves at most one slot; plus every address of an active-set peer and of this node itself.
   */
  #probed(): Entry[] {
    if (this.#entries.size <= this.#subsetSize) return [...this.#entries.values()];
    if (this.#ranked === undefined) {
      // ranked once per change of the address list, not per round: a round is O(N) then, not O(N log N)
      const self = this.#selfId ?? "";
      this.#ranked = [...this.#entries.values()]
        .map((e) => ({ e, rank: hash32(`${self}|${e.address}`) }))
        .sort((a, b) => a.rank - b.rank || (a.e.address < b.e.address ? -1 : 1))
        .map(({ e }) => e);
    }
    return this.#ranked.filter(
      (e, i) => i < this.#subsetSize || e.self || (e.id !== "" && this.#active(e.id)),
    );
  }

  #isLive(id: PeerId): boolean {
    if (id === "") return false;
    for (const e of this.#byId.get(id) ?? []) if (e.up && !e.self) return true;
    return false;
  }

  /** Gives `e` the node id `id`, keeping `#byId` in step ("" removes it from every id). */
  #setId(e: Entry, id: PeerId): void {
    if (e.id === id) return;
    const old = this.#byId.get(e.id);
    old?.delete(e);
    if (old?.size === 0) this.#byId.delete(e.id);
    e.id = id;
    if (id === "") return;
    let set = this.#byId.get(id);
    if (set === undefined) this.#byId.set(id, (set = new Set()));
    set.add(e);
  }

  #info(e: Entry): PeerInfo {
    return {
      address: e.address,
      id: e.id,
      region: e.region,
      up: e.up,
      startedAt: e.startedAt,
      restarts: this.#restarts.get(e.id) ?? 0,
      rttMs: e.rttMs,
      consecutiveFailures: e.consecutiveFailures,
      lastError: e.lastError,
    };
  }

  #scheduleProbe(): void {
    if (!this.#running) return;
    this.#timer = this.#clock.setTimer(() => {
      void this.probeNow().finally(() => this.#scheduleProbe());
    }, jittered(this.#interval));
  }

  #scheduleRefresh(source: MembershipSource, every: number): void {
    const t = this.#clock.setTimer(() => {
      this.#refreshTimers = this.#refreshTimers.filter((x) => x !== t);
      if (!this.#running) return;
      void this.#refresh(source).finally(() => this.#scheduleRefresh(source, every));
    }, every);
    this.#refreshTimers.push(t);
  }

  async #refresh(source: MembershipSource): Promise<void> {
    if (await this.#resolve(source)) this.#apply();
  }

  /** Resolves one source into `#bySource`; false when it failed (the previous list kept) or stopped. */
  async #resolve(source: MembershipSource): Promise<boolean> {
    let addresses: string[];
    try {
      addresses = await source.resolve();
    } catch {
      return false; // keep the previous list; a resolver hiccup must not empty the swarm
    }
    if (this.#stopped) return false;
    this.#bySource.set(source, addresses);
    return true;
  }

  /** Makes the entries the union of every source's list: new addresses added, gone ones removed. */
  #apply(): void {
    if (this.#stopped) return;
    const wanted = new Set<string>();
    for (const list of this.#bySource.values()) for (const a of list) wanted.add(a);
    for (const a of wanted) {
      if (!this.#entries.has(a)) {
        this.#ranked = undefined;
        this.#entries.set(a, {
          address: a,
          id: "",
          region: "",
          up: false,
          startedAt: 0,
          rttMs: NaN,
          consecutiveFailures: 0,
          lastError: "",
          self: false,
          backoffMs: 0,
          nextProbeAt: 0,
        });
      }
    }
    for (const [a, e] of this.#entries) {
      if (wanted.has(a)) continue;
      this.#entries.delete(a);
      this.#ranked = undefined;
      const ids = this.#byId.get(e.id);
      ids?.delete(e);
      if (ids?.size === 0) this.#byId.delete(e.id);
      if (!e.self) {
        if (e.up && !this.#isLive(e.id)) this.emit("down", this.#info({ ...e, up: false }));
        this.emit("removed", this.#info(e));
      }
      this.pool.close(a);
    }
  }

  async #probe(e: Entry): Promise<void> {
    this.#probing.add(e);
    try {
      await this.#probeOnce(e);
    } finally {
      this.#probing.delete(e);
    }
  }

  async #probeOnce(e: Entry): Promise<void> {
    const client = this.pool.get(e.address);
    const sent = this.#clock.now();
    this.#probes++;
    const result = await probeCall<object, ProbeReply__Output>(
      client,
      swarmService().Probe,
      { sentUnixMs: Date.now() },
      this.#timeout,
    );
    if (this.#stopped || this.#entries.get(e.address) !== e) return;
    if (!result.ok) return this.#failed(e, result.code, result.details);
    const reply = result.reply;
    e.rttMs = this.#clock.now() - sent;
    e.consecutiveFailures = 0;
    e.lastError = "";
    e.backoffMs = 0;
    e.nextProbeAt = 0;
    if (this.#selfId !== undefined && reply.nodeId === this.#selfId) {
      e.self = true;
      this.#setId(e, reply.nodeId);
      return;
    }
    const id = reply.nodeId;
    if (e.id !== "" && e.id !== id && e.up) {
      // This address now belongs to another node: the old id loses it.
      e.up = false;
      if (!this.#isLive(e.id)) this.emit("down", this.#info(e));
    }
    if (e.id !== id || e.region === "") {
      try {
        const st = await unaryCall<object, StateReply__Output>(
          client,
          swarmService().State,
          {},
          this.#timeout,
        );
        e.region = st.region;
      } catch {
        // Region stays unknown until the next probe; liveness does not depend on it.
      }
      if (this.#stopped || this.#entries.get(e.address) !== e) return;
    }
    const wasLive = this.#isLive(id);
    this.#setId(e, id);
    e.startedAt = reply.startedAtUnixMs;
    const known = this.#started.get(id);
    this.#started.set(id, reply.startedAtUnixMs);
    if (known !== undefined && known !== reply.startedAtUnixMs) {
      this.#restarts.set(id, (this.#restarts.get(id) ?? 0) + 1);
      this.emit("restarted", this.#info(e));
    }
    e.up = true;
    if (!wasLive) this.emit("up", this.#info(e));
  }

  #failed(e: Entry, code: status, details: string): void {
    e.consecutiveFailures++;
    e.lastError = details || status[code];
    if (e.id !== "") this.emit("probeFailed", this.#info(e), code);
    if (e.up && e.consecutiveFailures >= this.#threshold) {
      e.up = false;
      if (!this.#isLive(e.id)) this.emit("down", this.#info(e));
    }
    if (!e.up) {
      // Exponential backoff, as gRPC's reconnects have: a swarm starting together (or a node whose
      // subset is mostly not listening yet) otherwise probes every silent address every round, each
      // on a fresh connection, and at hundreds of nodes per process that alone held the event loop.
      e.backoffMs = doubledWait(e.backoffMs, this.#interval, this.#backoffMaxMs);
      e.nextProbeAt = this.#clock.now() + jittered(e.backoffMs);
    }
    // A probe that timed out on a peer already down is a silent path (a partition drops packets, no
    // reset): its connection's retransmissions back off for seconds, so after the path heals the
    // old connection would wake up only at the next one. A probe refused (nothing listening yet, or
    // any more) leaves the channel in grpc-js's reconnect backoff, which grows to minutes. A fresh
    // channel per probe lets the first probe after healing, or after the peer starts, bring it in.
    if (!e.up && (code === status.DEADLINE_EXCEEDED || code === status.UNAVAILABLE))
      this.pool.close(e.address);
  }
}
