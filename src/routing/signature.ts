/**
 * Memory signatures: 32-bit hashes of object identities (content signature of a context, prefix, expert
 * set or tool result). Peers advertise a bounded set of them; a compatibility signature combines the
 * signatures of the compatible active subset and indexes the primitive tables.
 */
import type { SignatureLookup } from "./types.js";

/** Signature meaning "no compatible resident object": primitives take their no-reuse values. */
export const NO_MEMORY = 0;

/** Most signatures a peer advertises (keeps `State` small: 64 × 4 bytes). */
export const MAX_ADVERTISED_SIGNATURES = 64;

/**
 * FNV-1a over the UTF-16 code units of `text`, never 0 (0 is reserved for `NO_MEMORY`).
 *
 * @example
 * const sig = signatureOf("rag:cluster-17");
 */
export function signatureOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h >>>= 0;
  return h === NO_MEMORY ? 1 : h;
}

/**
 * Order-independent combination of the signatures of a compatible subset (the compatibility signature
 * of an action). The empty subset is `NO_MEMORY`; a single object is its own signature.
 */
export function combineSignatures(signatures: readonly number[]): number {
  if (signatures.length === 0) return NO_MEMORY;
  if (signatures.length === 1) return signatures[0]! >>> 0 || 1;
  const sorted = [...signatures].map((s) => s >>> 0).sort((a, b) => a - b);
  let h = 0x811c9dc5;
  for (const s of sorted) {
    for (let shift = 0; shift < 32; shift += 8) {
      h ^= (s >>> shift) & 0xff;
      h = Math.imul(h, 0x01000193);
    }
  }
  h >>>= 0;
  return h === NO_MEMORY ? 1 : h;
}

/** A sorted, bounded set of signatures with binary-search lookup; what a peer advertises. */
export class SignatureSet implements SignatureLookup {
  private readonly sorted: Uint32Array;

  private constructor(sorted: Uint32Array) {
    this.sorted = sorted;
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
    const s = signature >>> 0;
    let lo = 0;
    let hi = this.sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.sorted[mid]!;
      if (v === s) return true;
      if (v < s) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
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
