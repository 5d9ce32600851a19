/**
 * Memory signatures: 32-bit hashes of object identities (content signature of a context, prefix, expert
 * set or tool result). Peers advertise a bounded set of them; the signature of the object a task needs
 * is its compatibility signature, which indexes the primitive tables.
 */
import { hash32 } from "../util/hash.js";
import type { SignatureLookup } from "./types.js";

/** Signature meaning "no compatible resident object": primitives take their no-reuse values. */
export const NO_MEMORY = 0;

/** Most signatures a peer advertises (keeps `State` small: 64 × 4 bytes). */
export const MAX_ADVERTISED_SIGNATURES = 64;

/**
 * `hash32` of `text` (FNV-1a), never 0 (0 is reserved for `NO_MEMORY`).
 *
 * @example
 * const sig = signatureOf("rag:cluster-17");
 */
export function signatureOf(text: string): number {
  const h = hash32(text);
  return h === NO_MEMORY ? 1 : h;
}

/**
 * A bounded set of signatures; what a peer advertises. Built once per advert, read by the router for
 * every candidate of every route call: membership is an open-addressing hash table (load ≤ 1/2, so one
 * or two probes), the sorted array serves `toArray`.
 */
export class SignatureSet implements SignatureLookup {
  private readonly sorted: Uint32Array;
  /** Slots hold a signature as int32 (`s | 0`, no heap numbers) or 0 (empty: `NO_MEMORY` is never a member). */
  private readonly table: Int32Array;
  private readonly mask: number;
  private readonly shift: number;

  private constructor(sorted: Uint32Array) {
    this.sorted = sorted;
    let bits = 1;
    while (1 << bits < 2 * sorted.length) bits++;
    this.table = new Int32Array(1 << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
    for (const s of sorted) {
      const v = s | 0;
      let i = Math.imul(v, 0x9e3779b1) >>> this.shift;
      while (this.table[i] !== 0) i = (i + 1) & this.mask;
      this.table[i] = v;
    }
  }

  /**
   * Keep at most `max` signatures, the first ones given (callers order by value: most useful first).
   *
   * @example
   * const advertised = SignatureSet.bounded(residentByValue.map((o) => o.signature));
   */
  static bounded(signatures: Iterable<number>, max = MAX_ADVERTISED_SIGNATURES): SignatureSet {
    const out: number[] = [];
    const seen = new Set<number>();
    for (const s of signatures) {
      if (out.length >= max) break;
      const u = s >>> 0;
      if (u === NO_MEMORY || seen.has(u)) continue;
      seen.add(u);
      out.push(u);
    }
    return new SignatureSet(Uint32Array.from(out).sort());
  }

  get size(): number {
    return this.sorted.length;
  }

  has(signature: number): boolean {
    return this.hasInt32(signature | 0);
  }

  /**
   * `has` for a signature given as int32 (`signature | 0`): what the router passes — a uint32 ≥ 2^31
   * is a heap number, and passing one to a call that is not inlined allocates, once per candidate.
   */
  hasInt32(s: number): boolean {
    // Fibonacci hashing: the top bits of `s · 2^32/φ`.
    if (s === NO_MEMORY) return false;
    const table = this.table;
    for (let i = Math.imul(s, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & this.mask) {
      const v = table[i]!;
      if (v === s) return true;
      if (v === 0) return false;
    }
  }

  toArray(): number[] {
    return Array.from(this.sorted);
  }
}

/** Compatibility signature of a task at a peer: its signature when resident there, else `NO_MEMORY`. */
export function compatibilityAt(signature: number | undefined, resident: SignatureLookup): number {
  return signature !== undefined && signature !== NO_MEMORY && resident.has(signature)
    ? signature
    : NO_MEMORY;
}
