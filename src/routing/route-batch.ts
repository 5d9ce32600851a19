/**
 * The router's scratch state for one route call, reused across calls so that scoring allocates nothing
 * per candidate: the feasible candidates in parallel arrays (what a batch scorer reads, see
 * `Scorer.scoreAll`), and the one Candidate object repointed for scorers that take candidates one at a
 * time.
 */
import type { PeerSlot } from "./peer-slot.js";
import type { QueueKeys } from "./queue-keys.js";
import type { Candidate, CandidateBatch } from "./scorer.js";
import type { PeerView } from "./types.js";

/** Depth of `key` at a candidate: advertised plus reserved (read through its slot when it has one). */
function queueAt(
  view: PeerView,
  slot: PeerSlot | undefined,
  keys: QueueKeys,
  key: string,
  keyId?: number,
): number {
  return slot === undefined ? (view.queues[key] ?? 0) : slot.queue(view, keyId ?? keys.id(key), key);
}

export class RouteBatch implements CandidateBatch {
  size = 0;
  /** Index in the route call's `candidates` of each feasible candidate. */
  index = new Int32Array(64);
  private readonly views: PeerView[] = [];
  private readonly slots: (PeerSlot | undefined)[] = [];
  private transfer = new Float64Array(64);
  private readonly candidate: MutableCandidate;

  constructor(private readonly keys: QueueKeys) {
    this.candidate = new MutableCandidate(keys);
  }

  /** Empty, with room for `n` candidates. */
  reset(n: number): void {
    this.size = 0;
    if (this.index.length < n) {
      const size = Math.max(n, this.index.length * 2);
      this.index = new Int32Array(size);
      this.transfer = new Float64Array(size);
    }
  }

  /** Appends candidate `i` (only its index: for scorers that take candidates one at a time). */
  pushIndex(i: number): void {
    this.index[this.size++] = i;
  }

  /** Appends candidate `i` with what a batch scorer reads. */
  push(i: number, view: PeerView, slot: PeerSlot | undefined, transferPenalty: number): void {
    const j = this.size++;
    this.index[j] = i;
    this.views[j] = view;
    this.slots[j] = slot;
    this.transfer[j] = transferPenalty;
  }

  view(i: number): PeerView {
    return this.views[i]!;
  }

  keyId(key: string): number {
    return this.keys.id(key);
  }

  queue(i: number, key: string, keyId?: number): number {
    return queueAt(this.views[i]!, this.slots[i], this.keys, key, keyId);
  }

  transferPenalty(i: number): number {
    return this.transfer[i]!;
  }

  at(i: number): Candidate {
    return this.one(this.views[i]!, this.slots[i], this.transfer[i]!);
  }

  /** The reused Candidate, pointed at `view`. */
  one(view: PeerView, slot: PeerSlot | undefined, transferPenalty: number): Candidate {
    const c = this.candidate;
    c.view = view;
    c.slot = slot;
    c.backlog = view.backlog + (slot === undefined ? 0 : slot.total);
    c.transferPenalty = transferPenalty;
    return c;
  }
}

class MutableCandidate implements Candidate {
  view!: PeerView;
  slot: PeerSlot | undefined;
  backlog = 0;
  transferPenalty = 0;

  constructor(private readonly keys: QueueKeys) {}

  readonly queue = (key: string): number => queueAt(this.view, this.slot, this.keys, key);
}
