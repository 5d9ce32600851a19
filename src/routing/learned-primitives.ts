/**
 * Learn-MABP: primitives profiled online from observed outcomes, per (peer, queue key, compatibility
 * signature), as running means. A pair never observed takes no-reuse values, as in the paper, so a peer
 * must be seen reusing an object before the router credits the reuse. The lookup falls back from (peer,
 * key, compat) to the peer's no-reuse profile, then to the key's no-reuse profile over all peers (so an
 * unobserved peer does not look cheaper than the observed ones), then to the prior's no-reuse entry.
 *
 * `get` runs for every candidate of every route call: it allocates nothing (nested maps, no composite
 * string key) and returns the entry built once per profile after its last observation.
 */
import type { PeerId } from "../estimate/types.js";
import type { PrimitiveEntry, Primitives, Successor } from "./primitives.js";
import { NO_MEMORY } from "./signature.js";

/** What one completed unit showed: the work it took, its penalty, the successors it created. */
export interface ObservedOutcome {
  readonly work: number;
  readonly penalty: number;
  readonly successors: readonly string[];
}

class Profile {
  n = 0;
  work = 0;
  penalty = 0;
  readonly successorCounts = new Map<string, number>();
  entry: PrimitiveEntry | undefined;

  constructor(
    readonly peer: PeerId,
    readonly key: string,
    readonly compat: number,
  ) {}
}

/** One peer's profiles of one queue key. */
interface PeerProfiles {
  noReuse: Profile | undefined;
  readonly bySignature: Map<number, Profile>;
}

export interface LearnedPrimitivesOptions {
  /** Observations needed before a profile replaces the prior. Default 1. */
  readonly minSamples?: number;
  /**
   * What an unseen pair takes: `"learned"` (default) the fallback order above; `"prior"` the prior's
   * no-reuse entry straight away — for a prior that is the true no-reuse table (the simulator's), which
   * learned means can only approximate.
   */
  readonly unseen?: "learned" | "prior";
  /** Most profiles kept (oldest-inserted dropped first). Default 100_000. */
  readonly maxProfiles?: number;
}

/**
 * @example
 * const learned = new LearnedPrimitives(noReuseTable);
 * learned.observe("peer-a", "rag/0", sig, { work: 1, penalty: 1, successors: ["rag/1"] });
 * const router = createRouter("mabp", { primitives: learned });
 */
export class LearnedPrimitives implements Primitives {
  private readonly byKey = new Map<string, Map<PeerId, PeerProfiles>>();
  /** No-reuse outcomes per key over all peers (fallback step 3); not counted against `maxProfiles`. */
  private readonly pooled = new Map<string, Profile>();
  /** Profiles in insertion order from `head` (for eviction). */
  private order: Profile[] = [];
  private head = 0;
  private count = 0;
  private readonly minSamples: number;
  private readonly maxProfiles: number;
  private readonly learnedNoReuse: boolean;
  // The last key looked up: a router asks for one key for every candidate of a call.
  private lastKey: string | undefined;
  private lastPeers: Map<PeerId, PeerProfiles> | undefined;

  constructor(
    private readonly prior: Primitives,
    options: LearnedPrimitivesOptions = {},
  ) {
    this.minSamples = Math.max(1, options.minSamples ?? 1);
    this.maxProfiles = Math.max(1, options.maxProfiles ?? 100_000);
    this.learnedNoReuse = (options.unseen ?? "learned") === "learned";
  }

  observe(peer: PeerId, key: string, compat: number, outcome: ObservedOutcome): void {
    const c = compat >>> 0;
    let peers = this.byKey.get(key);
    if (peers === undefined) {
      peers = new Map();
      this.byKey.set(key, peers);
      this.lastKey = undefined;
    }
    let pp = peers.get(peer);
    if (pp === undefined) {
      pp = { noReuse: undefined, bySignature: new Map() };
      peers.set(peer, pp);
    }
    let p = c === NO_MEMORY ? pp.noReuse : pp.bySignature.get(c);
    if (p === undefined) {
      if (this.count >= this.maxProfiles) this.evictOldest();
      p = new Profile(peer, key, c);
      if (c === NO_MEMORY) pp.noReuse = p;
      else pp.bySignature.set(c, p);
      this.order.push(p);
      this.count += 1;
    }
    record(p, outcome);
    if (c === NO_MEMORY) {
      let pooled = this.pooled.get(key);
      if (pooled === undefined) {
        pooled = new Profile("*", key, NO_MEMORY);
        this.pooled.set(key, pooled);
      }
      record(pooled, outcome);
    }
  }

  get(peer: PeerId, key: string, compat: number): PrimitiveEntry {
    let peers = this.lastPeers;
    if (key !== this.lastKey) {
      peers = this.byKey.get(key);
      this.lastKey = key;
      this.lastPeers = peers;
    }
    const pp = peers?.get(peer);
    if (pp !== undefined) {
      const c = compat >>> 0;
      if (c !== NO_MEMORY) {
        // `compat` itself when it is already a uint32: no heap number made for the lookup.
        const p = pp.bySignature.get(c === compat ? compat : c);
        if (p !== undefined && p.n >= this.minSamples) return p.entry ?? entryOf(p);
      }
      const own = pp.noReuse;
      if (own !== undefined && own.n >= this.minSamples && (this.learnedNoReuse || c === NO_MEMORY)) {
        return own.entry ?? entryOf(own);
      }
    }
    if (this.learnedNoReuse) {
      const pooled = this.pooled.get(key);
      if (pooled !== undefined && pooled.n >= this.minSamples) return pooled.entry ?? entryOf(pooled);
    }
    return this.prior.get(peer, key, NO_MEMORY);
  }

  /**
   * The profile of exactly (peer, key, compat) — no fallback — as observed so far; undefined when never
   * observed. For introspection (tests, status).
   */
  profile(
    peer: PeerId,
    key: string,
    compat: number,
  ): { readonly n: number; readonly entry: PrimitiveEntry } | undefined {
    const pp = this.byKey.get(key)?.get(peer);
    const c = compat >>> 0;
    const p = pp === undefined ? undefined : c === NO_MEMORY ? pp.noReuse : pp.bySignature.get(c);
    return p === undefined ? undefined : { n: p.n, entry: p.entry ?? entryOf(p) };
  }

  /** Profiles held (for tests and introspection). */
  get size(): number {
    return this.count;
  }

  private evictOldest(): void {
    const p = this.order[this.head]!;
    this.head += 1;
    this.count -= 1;
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
    const peers = this.byKey.get(p.key)!;
    const pp = peers.get(p.peer)!;
    if (p.compat === NO_MEMORY) pp.noReuse = undefined;
    else pp.bySignature.delete(p.compat);
    if (pp.noReuse === undefined && pp.bySignature.size === 0) peers.delete(p.peer);
    if (peers.size === 0) {
      this.byKey.delete(p.key);
      this.lastKey = undefined;
    }
  }
}

function record(p: Profile, outcome: ObservedOutcome): void {
  p.n += 1;
  p.work += (outcome.work - p.work) / p.n;
  p.penalty += (outcome.penalty - p.penalty) / p.n;
  for (const s of outcome.successors) p.successorCounts.set(s, (p.successorCounts.get(s) ?? 0) + 1);
  p.entry = undefined;
}

/** The entry of `p` (built once per observation, then cached on the profile). */
function entryOf(p: Profile): PrimitiveEntry {
  const successors: Successor[] = [];
  for (const [k, count] of p.successorCounts) successors.push({ key: k, p: Math.min(1, count / p.n) });
  p.entry = { work: Math.max(p.work, Number.EPSILON), penalty: p.penalty, successors };
  return p.entry;
}
