/**
 * Service primitives of an action: work `w(a, Y)`, penalty `p(a, Y)` and successor law `P(c' | a, Y)`.
 * They depend on memory only through the compatible active subset, named by its compatibility
 * signature (`NO_MEMORY` for the empty subset), so a table indexed by (peer, queue key, compatibility)
 * holds them.
 */
import { invalid } from "../errors.js";
import { checkRange, numberAbove, numberRange } from "../util/range.js";
import type { PeerId } from "../estimate/types.js";
import { NO_MEMORY } from "./signature.js";

/** One possible successor: a unit of queue key `key` is created with probability `p`. */
export interface Successor {
  readonly key: string;
  readonly p: number;
}

export interface PrimitiveEntry {
  /** Work per completed unit (> 0). */
  readonly work: number;
  /** Quality-adjusted penalty per completed unit (may be negative). */
  readonly penalty: number;
  /** Successor law; the remaining probability mass exits. */
  readonly successors: readonly Successor[];
}

/**
 * Where a router reads primitives from: configuration (`PrimitiveTable`) or online profiles
 * (`LearnedPrimitives`).
 *
 * @example
 * const custom: Primitives = {
 *   get: (_peer, _key, compat) => (compat === NO_MEMORY ? { work: 4, penalty: 4, successors: [] } : { work: 1, penalty: 1, successors: [] }),
 * };
 */
export interface Primitives {
  get(peer: PeerId, key: string, compat: number): PrimitiveEntry;
}

/** Primitives of one queue key: no-reuse values, a default for any compatible object, per-signature overrides. */
export interface PrimitiveSpec {
  readonly noReuse: PrimitiveEntry;
  readonly reuse?: PrimitiveEntry;
  readonly bySignature?: ReadonlyMap<number, PrimitiveEntry>;
}

/** Unit work, zero penalty, no successors: what an unknown queue key costs. */
export const UNIT_PRIMITIVES: PrimitiveEntry = Object.freeze({
  work: 1,
  penalty: 0,
  successors: Object.freeze([]),
});

/** Throws INVALID_CONFIG naming the field when an entry is not a valid primitive. */
export function validateEntry(where: string, e: PrimitiveEntry): void {
  checkRange(`${where}.work`, e.work, numberAbove(0));
  if (!Number.isFinite(e.penalty)) {
    throw invalid(`${where}.penalty`, e.penalty, "a finite number", { code: "INVALID_CONFIG" });
  }
  let mass = 0;
  for (const s of e.successors) {
    checkRange(`${where}.successors[${s.key}].p`, s.p, numberRange(0, 1));
    mass += s.p;
  }
  if (mass > 1 + 1e-9) {
    throw invalid(`${where}.successors`, `probabilities summing to ${mass}`, "a sum of at most 1", {
      code: "INVALID_CONFIG",
    });
  }
}

/**
 * Primitives given in configuration, the same on every peer. Lookup: the per-signature entry, else the
 * `reuse` entry for any compatible object, else `noReuse`; unknown keys cost `UNIT_PRIMITIVES`.
 *
 * @example
 * const table = new PrimitiveTable({
 *   "rag/0": { noReuse: { work: 4, penalty: 4, successors: [{ key: "rag/1", p: 1 }] },
 *              reuse: { work: 1, penalty: 1, successors: [{ key: "rag/1", p: 1 }] } },
 * });
 */
export class PrimitiveTable implements Primitives {
  private readonly specs = new Map<string, PrimitiveSpec>();
  // The last key looked up: a router asks for one key for every candidate of a call.
  private lastKey: string | undefined;
  private lastSpec: PrimitiveSpec | undefined;

  constructor(specs: Readonly<Record<string, PrimitiveSpec>>) {
    for (const [key, spec] of Object.entries(specs)) {
      validateEntry(`primitives["${key}"].noReuse`, spec.noReuse);
      if (spec.reuse) validateEntry(`primitives["${key}"].reuse`, spec.reuse);
      for (const [sig, e] of spec.bySignature ?? [])
        validateEntry(`primitives["${key}"].bySignature[${sig}]`, e);
      this.specs.set(key, spec);
    }
  }

  get(_peer: PeerId, key: string, compat: number): PrimitiveEntry {
    let spec = this.lastSpec;
    if (key !== this.lastKey) {
      spec = this.specs.get(key);
      this.lastKey = key;
      this.lastSpec = spec;
    }
    if (spec === undefined) return UNIT_PRIMITIVES;
    if (compat === NO_MEMORY) return spec.noReuse;
    return spec.bySignature?.get(compat) ?? spec.reuse ?? spec.noReuse;
  }

  /** The memory-oblivious view: reuse and no-reuse entries averaged (what BP-style scores rank on). */
  averaged(key: string): PrimitiveEntry {
    const spec = this.specs.get(key);
    if (spec === undefined) return UNIT_PRIMITIVES;
    if (spec.reuse === undefined) return spec.noReuse;
    return averageEntries(spec.noReuse, spec.reuse);
  }
}

/** The mean of two entries (successor probabilities averaged key by key). */
export function averageEntries(a: PrimitiveEntry, b: PrimitiveEntry): PrimitiveEntry {
  const p = new Map<string, number>();
  for (const s of a.successors) p.set(s.key, (p.get(s.key) ?? 0) + s.p / 2);
  for (const s of b.successors) p.set(s.key, (p.get(s.key) ?? 0) + s.p / 2);
  return {
    work: (a.work + b.work) / 2,
    penalty: (a.penalty + b.penalty) / 2,
    successors: [...p].map(([key, q]) => ({ key, p: q })),
  };
}
