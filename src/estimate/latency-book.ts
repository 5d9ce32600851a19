import { systemClock } from "../clock/clock.js";
import type { Clock } from "../clock/clock.js";
import type { LimitListener } from "../engine/limit-listener.js";
import {
  checkRequirement,
  fanoutHorizon,
  fanoutQuantile,
  fanoutQuantileKind,
  fanoutQuantiles,
  quantileKind,
} from "./fanout.js";
import type { CensoredCdf } from "./censored-cdf.js";
import type { QuantileHint } from "./fanout.js";
import type { LatencySource } from "./latency-source.js";
import { ObservedFanouts, observedSetKey } from "./observed-fanouts.js";
import type { ObservedFanout } from "./observed-fanouts.js";
import { resolveOptions } from "./options.js";
import type { LatencyBookOptions } from "./options.js";
import { PeerLatency } from "./peer-latency.js";
import type { FanoutEstimate, InFlight, PeerEstimate, PeerId, QuantileKind, Requirement } from "./types.js";

/**
 * A set's last estimate. A miss on the same set rewrites its entry in place (the copy of the set, the
 * members and their versions kept), so an estimate of 1,000 peers allocates no per-peer arrays.
 */
interface CacheEntry {
  at: number;
  membership: number;
  /** The set as given (a copy) and its requirement: a hash slot is checked against them before it counts. */
  readonly peers: readonly PeerId[];
  readonly requirement: Requirement;
  /** The set's observed-set key (sorted ids): kept with the entry, as sorting 1,000 ids costs as much as a read. */
  readonly setKey: string;
  readonly members: (PeerLatency | undefined)[];
  readonly versions: Float64Array;
  /** The set's observed completion-time tracker and its version when the entry was computed. */
  observed: PeerLatency | undefined;
  observedVersion: number;
  result: FanoutEstimate;
}

const NO_PEERS: readonly PeerId[] = Object.freeze([]);
const NO_MEMBERS: readonly (PeerLatency | undefined)[] = Object.freeze([]);

/** The pair the policy reads, as `fanoutQuantiles` gives it. */
type Quantiles = ReturnType<typeof fanoutQuantiles>;

/** Some member has no CDF at all: no numbers (the kinds say nothing then). */
const UNKNOWN_QUANTILES: Quantiles = Object.freeze({
  p50Ms: NaN,
  p99Ms: NaN,
  p50Kind: "known",
  p99Kind: "known",
  horizonMs: Infinity,
});

/** Why a peer left the active set: idle for `activeIdleMs`, or the least recently used at `maxActivePeers`. */
export type ActiveSetLeave = "idle" | "full";

/** The active set's size and how many peers left it, by cause, since the book was made. */
export interface ActiveSetStats {
  readonly size: number;
  readonly leftIdle: number;
  readonly leftFull: number;
}

/**
 * Every peer's fresh latency, kept by one node, and the fan-out quantiles of a required set.
 *
 * Only peers in use are tracked (the active set): a peer leaves after `activeIdleMs` idle, or as the least
 * recently used past `maxActivePeers`, and its estimate goes with it, so memory follows the peers a node
 * talks to, not the swarm's size; `onLeave` hears each departure. A fan-out estimate (`basis`) is
 * `independent` (Π F_i over the members' CDFs, k-of-n by the Poisson-binomial tail) or, once the set's
 * own completion times are fresh, `observed`: their p50, and the larger of the two p99s (the p99 decides
 * speculation, and a few fan-outs per window say little of a 1 % tail). Either way it is unknown while
 * any member's estimate is, and a quantile takes the kind (`known`, `lower-bound`) of the value it came
 * from. `fanout` is cached for `fanoutTickMs`, and dropped as soon as any member's window changes, so a
 * decision never ignores a known sample.
 *
 * @example
 * const book = new LatencyBook({ windowMs: 10_000, minSamples: 20 }, clock);
 * const call = book.begin("peer-a", clock.now(), deadline);
 * transport.branch(...).then(() => call.complete(), () => call.failed());
 * const f = book.fanout(["peer-a", "peer-b"], { kind: "all" }, clock.now());
 * if (f.status === "fresh") classify(budget, f.p50Ms, f.p99Ms, abandonCost, relevant);
 */
export class LatencyBook implements LatencySource {
  readonly options: Readonly<LatencyBookOptions>;
  private readonly byPeer = new Map<PeerId, PeerLatency>();
  /** Fan-out estimates by `setHash` of the set as given; a colliding set takes the slot over. */
  private readonly cache = new Map<number, CacheEntry>();
  private readonly observed: ObservedFanouts;
  /**
   * The members' CDFs of the estimate being computed. Reused and not emptied after, so an estimate of
   * 1,000 members does not grow a new array: it holds the last set's CDFs (its members' own objects)
   * until the next estimate.
   */
  private readonly cdfs: CensoredCdf[] = [];
  private membership = 0;
  private nextSweepAt = -Infinity;
  private leftIdle = 0;
  private leftFull = 0;
  /** Called when a peer leaves the active set. */
  onLeave: ((peer: PeerId, cause: ActiveSetLeave) => void) | undefined;
  /**
   * Called when a call begins to a peer past `maxInFlightPerPeer` (limit `estimator.maxInFlightPerPeer`, the
   * node's config key): such a call still counts as censored while out, at the youngest untracked one's age.
   */
  onLimit: LimitListener | undefined;

  /** @throws TailswarmError INVALID_CONFIG naming the bad key, its value and what was expected. */
  constructor(
    options: Partial<LatencyBookOptions> = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.options = Object.freeze(resolveOptions(options));
    this.observed = new ObservedFanouts(this.options, this.options.observedFanoutSets, clock);
  }

  /**
   * A fan-out to `peers` is issued at `nowMs`: observe its completion time (the caller reports each
   * branch's end to the handle). Undefined when observation is off (`observedFanoutSets: 0`).
   */
  beginFanout(
    peers: readonly PeerId[],
    requirement: Requirement,
    nowMs: number,
    deadlineMs: number,
  ): ObservedFanout | undefined {
    if (this.observed.maxSets === 0 || peers.length === 0) return undefined;
    const entry = this.options.fanoutTickMs > 0 ? this.cache.get(setHash(peers, requirement)) : undefined;
    return this.observed.begin(peers, requirement, nowMs, deadlineMs, this.setKey(entry, peers, requirement));
  }

  /** Starts tracking a call to `peer` issued at `nowMs` with an absolute deadline (epoch ms). */
  begin(peer: PeerId, nowMs: number, deadlineMs?: number): InFlight {
    if (nowMs >= this.nextSweepAt) this.sweep(nowMs);
    const p = this.peerOf(peer);
    const call = p.begin(nowMs, deadlineMs);
    if (p.untrackedInFlight > 0 && this.onLimit !== undefined) {
      this.onLimit("estimator.maxInFlightPerPeer", {
        peer,
        inFlight: p.inFlightCount,
        max: this.options.maxInFlightPerPeer,
      });
    }
    return call;
  }

  /** Records a completed call's latency measured by the caller. */
  record(peer: PeerId, latencyMs: number, nowMs: number): void {
    if (nowMs >= this.nextSweepAt) this.sweep(nowMs);
    this.peerOf(peer).record(latencyMs, nowMs);
  }

  /** The active set now. */
  activeSet(): ActiveSetStats {
    return { size: this.byPeer.size, leftIdle: this.leftIdle, leftFull: this.leftFull };
  }

  /** True when `peer` is tracked (in the active set). */
  tracks(peer: PeerId): boolean {
    return this.byPeer.has(peer);
  }

  /**
   * Drops the peers idle for `activeIdleMs` as of `nowMs` (run by `begin`/`record` at most four times per
   * idle period, so a peer leaves between `activeIdleMs` and 1.25 × it after its last use).
   */
  sweep(nowMs: number): void {
    const idle = this.options.activeIdleMs;
    this.nextSweepAt = nowMs + idle / 4;
    for (const [id, p] of this.byPeer) {
      if (p.inFlightCount === 0 && nowMs - p.lastUsedAt >= idle) this.leave(id, "idle");
    }
  }

  /** The peer's estimate; "unknown"/"never-sampled" for a peer never seen. */
  estimate(peer: PeerId, nowMs: number): PeerEstimate {
    const p = this.byPeer.get(peer);
    if (p === undefined) return neverSampled(peer);
    return p.estimate(nowMs);
  }

  /** P(latency of `peer` <= tMs) at `nowMs` (0 for a peer never seen). */
  cdf(peer: PeerId, tMs: number, nowMs: number): number {
    return this.byPeer.get(peer)?.cdfAt(tMs, nowMs) ?? 0;
  }

  /** Stops tracking `peer` (it left the membership). */
  forget(peer: PeerId): void {
    const p = this.byPeer.get(peer);
    if (p === undefined) return;
    p.version++;
    this.byPeer.delete(peer);
    this.observed.forgetPeer(peer);
    this.membership++;
  }

  /** The peer restarted: forget its samples and calls; its estimate says "peer-reset" until fresh again. */
  reset(peer: PeerId): void {
    this.peerOf(peer).reset();
    if (this.observed.forgetPeer(peer)) this.membership++;
  }

  peers(): PeerId[] {
    return [...this.byPeer.keys()];
  }

  /** The tracker of one peer (created on first use), for callers that keep a reference on a hot path. */
  peerOf(peer: PeerId): PeerLatency {
    let p = this.byPeer.get(peer);
    if (p === undefined) {
      if (this.byPeer.size >= this.options.maxActivePeers) this.evictLeastRecent();
      p = new PeerLatency(peer, this.options, this.clock);
      this.byPeer.set(peer, p);
      this.membership++;
    }
    return p;
  }

  /**
   * p50/p99 of the time until `requirement` of `peers` have answered, as of `nowMs`. Unknown when any peer's
   * own estimate is unknown (the numbers are still computed when every peer has some data, for
   * explanations). An empty set is fresh with 0 ms.
   *
   * @throws TailswarmError INVALID_ARGUMENT when a quorum's k is not an integer in [1, peers.length].
   */
  fanout(peers: readonly PeerId[], requirement: Requirement, nowMs: number): FanoutEstimate {
    const tick = this.options.fanoutTickMs;
    const slot = tick > 0 ? setHash(peers, requirement) : 0;
    // an expired or outdated entry still says where the quantiles were: the search starts there
    const hit = tick > 0 ? this.cache.get(slot) : undefined;
    if (hit !== undefined && this.valid(hit, peers, requirement, nowMs, tick)) return hit.result;
    const hint: QuantileHint | undefined = hit?.result;
    checkRequirement(requirement, peers.length);
    const same = hit !== undefined && sameSet(hit, peers, requirement);
    const setKey = peers.length === 0 ? "" : same ? hit.setKey : observedSetKey(peers, requirement);
    const n = peers.length;
    const members = same ? hit.members : new Array<PeerLatency | undefined>(n);
    const versions = same ? hit.versions : new Float64Array(n);
    const cdfs = this.cdfs;
    let known = 0;
    let unknown: PeerId[] | undefined;
    let maxAgeMs = 0;
    let minSamples = n === 0 ? 0 : Infinity;
    let minCompleted = minSamples;
    let complete = true;
    for (let i = 0; i < n; i++) {
      const id = peers[i] as PeerId;
      const p = this.byPeer.get(id);
      members[i] = p;
      if (p === undefined) {
        (unknown ??= []).push(id);
        maxAgeMs = Infinity;
        minSamples = 0;
        minCompleted = 0;
        complete = false;
        versions[i] = -1;
        continue;
      }
      p.refresh(nowMs);
      versions[i] = p.version;
      if (p.status !== "fresh") (unknown ??= []).push(id);
      if (p.ageMs > maxAgeMs) maxAgeMs = p.ageMs;
      if (p.counted < minSamples) minSamples = p.counted;
      if (p.samples < minCompleted) minCompleted = p.samples;
      const cdf = p.cdf(nowMs);
      if (cdf.empty) complete = false;
      cdfs[known++] = cdf;
    }
    if (cdfs.length !== known) cdfs.length = known;
    const observed = n === 0 ? undefined : this.observed.get(setKey);
    observed?.refresh(nowMs);
    const useObserved = observed !== undefined && observed.status === "fresh";
    let q: Quantiles;
    if (useObserved) {
      // the observed p50 stands; the product's p99 is still the floor of the p99 (its p50 is not needed)
      const own = observed.cdf(nowMs); // fresh: something ended, so not empty
      const observedP99 = own.quantile(0.99);
      const observedKind: QuantileKind = own.lowerBound(0.99) ? "lower-bound" : "known";
      const memberHorizon = complete ? fanoutHorizon(cdfs) : Infinity;
      const independentP99 = complete ? fanoutQuantile(cdfs, requirement, 0.99, hint?.p99Ms) : NaN;
      const independentKind = complete
        ? fanoutQuantileKind(cdfs, independentP99, memberHorizon)
        : quantileKind(independentP99, memberHorizon);
      // The p99 takes the larger value's kind; on a tie a lower bound wins (the max is at least it).
      let p99Ms = observedP99;
      let p99Kind = observedKind;
      if (independentP99 > observedP99) {
        p99Ms = independentP99;
        p99Kind = independentKind;
      } else if (independentP99 === observedP99 && independentKind === "lower-bound")
        p99Kind = independentKind;
      q = {
        p50Ms: own.quantile(0.5),
        p99Ms,
        p50Kind: own.lowerBound(0.5) ? "lower-bound" : "known",
        p99Kind,
        horizonMs: Math.min(own.horizonMs, memberHorizon),
      };
    } else q = complete ? fanoutQuantiles(cdfs, requirement, hint) : UNKNOWN_QUANTILES;
    let floor = unknown !== undefined ? this.p50Floor(members, requirement, observed, nowMs) : NaN;
    // the set's own measured (known) median below the floor: trust the set, and its own floor
    if (useObserved && q.p50Kind === "known" && q.p50Ms < floor)
      floor = this.p50Floor(NO_MEMBERS, requirement, observed, nowMs);
    const result: FanoutEstimate = {
      status: unknown === undefined ? "fresh" : "unknown",
      unknownPeers: unknown ?? NO_PEERS,
      p50Ms: q.p50Ms,
      p99Ms: q.p99Ms,
      p50Kind: q.p50Kind,
      p99Kind: q.p99Kind,
      horizonMs: q.horizonMs,
      requirement,
      size: n,
      maxAgeMs,
      minSamples,
      minCompletedSamples: minCompleted,
      basis: useObserved ? "observed" : "independent",
      observedSamples: observed?.samples ?? 0,
      ...(floor > 0 && { p50FloorMs: floor }),
    };
    if (tick > 0 && same) {
      hit.at = nowMs;
      hit.membership = this.membership;
      hit.observed = observed;
      hit.observedVersion = observed?.version ?? -1;
      hit.result = result;
    } else if (tick > 0) {
      if (this.cache.size >= this.options.maxCachedFanouts) this.cache.clear();
      this.cache.set(slot, {
        at: nowMs,
        membership: this.membership,
        peers: peers.slice(),
        requirement,
        setKey,
        members,
        versions,
        observed,
        observedVersion: observed?.version ?? -1,
        result,
      });
    }
    return result;
  }

  /**
   * A floor of a set's fan-out p50 (NaN: none): the largest `p50FloorMs` of the set's own observed
   * fan-outs and, when it waits for every answer, of its members — a fan-out that waits for every member is
   * done no sooner than any one of them, whatever their latencies' dependence (P(max <= t) <= min F_i(t)).
   * A source whose newest observation is older than `maxSampleAgeMs` counts for nothing: a degrade issues
   * no branch, so a floor from before a stall would otherwise hold until the window forgets it. Reads the
   * members' CDFs from `cdfs` (in `members` order, the absent skipped), as `fanout` left them.
   */
  private p50Floor(
    members: readonly (PeerLatency | undefined)[],
    requirement: Requirement,
    observed: PeerLatency | undefined,
    nowMs: number,
  ): number {
    const maxAgeMs = this.options.maxSampleAgeMs;
    let floor = observed === undefined || observed.ageMs > maxAgeMs ? NaN : observed.cdf(nowMs).p50FloorMs();
    if (requirement.kind !== "all") return floor;
    let j = 0;
    for (const p of members) {
      if (p === undefined) continue;
      const cdf = this.cdfs[j++] as CensoredCdf;
      if (p.ageMs > maxAgeMs) continue;
      const m = cdf.p50FloorMs();
      if (m > floor || Number.isNaN(floor)) floor = m;
    }
    return floor;
  }

  private leave(peer: PeerId, cause: ActiveSetLeave): void {
    this.forget(peer);
    if (cause === "idle") this.leftIdle++;
    else this.leftFull++;
    this.onLeave?.(peer, cause);
  }

  /** Makes room for one peer: the idle ones go first, else the least recently used. */
  private evictLeastRecent(): void {
    this.sweep(this.clock.now());
    if (this.byPeer.size < this.options.maxActivePeers) return;
    let oldest: PeerId | undefined;
    let at = Infinity;
    for (const [id, p] of this.byPeer) {
      if (p.lastUsedAt < at) {
        at = p.lastUsedAt;
        oldest = id;
      }
    }
    if (oldest !== undefined) this.leave(oldest, "full");
  }

  /**
   * Heap bytes of all peers' estimators and the observed sets (excluding the fan-out cache), as
   * `footprint.ts` counts them: a few percent below what the heap holds per peer (a peer's id and map
   * entry are not counted; `npm run bench -- estimate` prints both).
   */
  get estimatedFootprintInBytes(): number {
    let bytes = this.observed.estimatedFootprintInBytes;
    for (const p of this.byPeer.values()) bytes += p.estimatedFootprintInBytes;
    return bytes;
  }

  /** The observed-set key of `peers`: the cache entry's when it is this set's (expired or not), else sorted anew. */
  private setKey(entry: CacheEntry | undefined, peers: readonly PeerId[], requirement: Requirement): string {
    return entry !== undefined && sameSet(entry, peers, requirement)
      ? entry.setKey
      : observedSetKey(peers, requirement);
  }

  /**
   * True when `entry` is the estimate of `peers` for `requirement` and still current: same set in the same
   * order, within the tick, no peer joined or left, no member's window or observed set changed. O(n)
   * comparisons, no allocation.
   */
  private valid(
    entry: CacheEntry,
    peers: readonly PeerId[],
    requirement: Requirement,
    nowMs: number,
    tick: number,
  ): boolean {
    if (!(nowMs >= entry.at && nowMs - entry.at < tick) || entry.membership !== this.membership) return false;
    if ((entry.observed?.version ?? -1) !== entry.observedVersion) return false;
    if (!sameSet(entry, peers, requirement)) return false;
    const members = entry.members;
    const versions = entry.versions;
    for (let i = 0; i < members.length; i++) {
      const p = members[i];
      if (p !== undefined && p.version !== versions[i]) return false;
    }
    return true;
  }
}

/**
 * The cache slot of a set as given: a 32-bit hash of its size, requirement and, per peer, its id's
 * length and four of its characters (cheap, allocation-free; `valid` compares the whole set).
 */
function setHash(peers: readonly PeerId[], requirement: Requirement): number {
  let h = Math.imul(0x811c9dc5 ^ peers.length, 0x01000193);
  h = Math.imul(h ^ (requirement.kind === "all" ? -1 : requirement.k), 0x01000193);
  for (let i = 0; i < peers.length; i++) {
    const id = peers[i] as PeerId;
    const len = id.length;
    let x = len;
    if (len > 0) {
      x = Math.imul(x ^ id.charCodeAt(len - 1), 0x01000193);
      x = Math.imul(x ^ id.charCodeAt(len >> 1), 0x01000193);
      x = Math.imul(x ^ id.charCodeAt(0), 0x01000193);
      if (len > 1) x = Math.imul(x ^ id.charCodeAt(len - 2), 0x01000193);
    }
    h = Math.imul(h ^ x, 0x01000193);
  }
  return h | 0;
}

/** True when `entry` was computed for `peers` in this order and `requirement`. */
function sameSet(entry: CacheEntry, peers: readonly PeerId[], requirement: Requirement): boolean {
  const r = entry.requirement;
  if (r.kind === "all" ? requirement.kind !== "all" : requirement.kind !== "quorum" || requirement.k !== r.k)
    return false;
  const given = entry.peers;
  if (given.length !== peers.length) return false;
  for (let i = 0; i < given.length; i++) if (given[i] !== peers[i]) return false;
  return true;
}

function neverSampled(peer: PeerId): PeerEstimate {
  return {
    peer,
    status: "unknown",
    reason: "never-sampled",
    p50Ms: NaN,
    p99Ms: NaN,
    p50Kind: "known",
    p99Kind: "known",
    horizonMs: Infinity,
    samples: 0,
    censored: 0,
    censoredEnds: 0,
    ageMs: Infinity,
  };
}
