/**
 * Learn-MABP: primitives profiled online from observed outcomes, per (peer, queue key, compatibility
 * signature), as running means. Pairs never observed fall back to the prior (the no-reuse values, as
 * in the paper), so a peer must be seen reusing an object before the router credits the reuse.
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

interface Profile {
  n: number;
  work: number;
  penalty: number;
  successorCounts: Map<string, number>;
  entry: PrimitiveEntry | undefined;
}

export interface LearnedPrimitivesOptions {
  /** Observations needed before a profile replaces the prior. Default 1. */
  readonly minSamples?: number;
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
  private readonly profiles = new Map<string, Profile>();
  private readonly minSamples: number;
  private readonly maxProfiles: number;

  constructor(
    private readonly prior: Primitives,
    options: LearnedPrimitivesOptions = {},
  ) {
    this.minSamples = Math.max(1, options.minSamples ?? 1);
    this.maxProfiles = Math.max(1, options.maxProfiles ?? 100_000);
  }

  observe(peer: PeerId, key: string, compat: number, outcome: ObservedOutcome): void {
    const id = profileId(peer, key, compat);
    let p = this.profiles.get(id);
    if (p === undefined) {
      if (this.profiles.size >= this.maxProfiles) {
        const oldest = this.profiles.keys().next();
        if (!oldest.done) this.profiles.delete(oldest.value);
      }
      p = { n: 0, work: 0, penalty: 0, successorCounts: new Map(), entry: undefined };
      this.profiles.set(id, p);
    }
    p.n += 1;
    p.work += (outcome.work - p.work) / p.n;
    p.penalty += (outcome.penalty - p.penalty) / p.n;
    for (const s of outcome.successors) p.successorCounts.set(s, (p.successorCounts.get(s) ?? 0) + 1);
    p.entry = undefined;
  }

  get(peer: PeerId, key: string, compat: number): PrimitiveEntry {
    const p = this.profiles.get(profileId(peer, key, compat));
    if (p === undefined || p.n < this.minSamples) return this.prior.get(peer, key, NO_MEMORY);
    if (p.entry === undefined) {
      const successors: Successor[] = [];
      for (const [k, count] of p.successorCounts) successors.push({ key: k, p: Math.min(1, count / p.n) });
      p.entry = { work: Math.max(p.work, Number.EPSILON), penalty: p.penalty, successors };
    }
    return p.entry;
  }

  /** Profiles held (for tests and introspection). */
  get size(): number {
    return this.profiles.size;
  }
}

function profileId(peer: PeerId, key: string, compat: number): string {
  return `${peer}\u0000${key}\u0000${compat >>> 0}`;
}
