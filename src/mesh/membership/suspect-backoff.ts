/**
 * When a peer whose branches say too little (`PeerHealth.needsProbe`: suspected — its last branch bad,
 * or ejected, or on probation — or idle) is probed again. Branch outcomes stay the primary signal (a
 * peer's first bad branch is probed at once, `PeerHealth.onSuspect`); after that such a peer is probed
 * at a backoff, not every round: the wait starts at the probe
 * interval and doubles per probe up to `backoffMaxMs`, jittered ±20%, and a peer that no longer needs one
 * starts over. A refused probe does not grow the wait (`refused`): only probes that time out back off.
 * Probing every suspect every round fed on itself under overload: fan-outs failing for lack of CPU
 * made suspects, and their probes took more CPU.
 *
 * @example
 * const suspects = new SuspectBackoff({ intervalMs: 1_000, backoffMaxMs: 10_000 });
 * const need = health.needsProbe(peer, now, idleMs);
 * if (suspects.due(peer, now, need) && need) sendProbe(peer); // `due` counts the probe sent
 */
import type { PeerId } from "../../estimate/types.js";
import { doubledWait, jittered } from "./backoff.js";
import { checkRange, intRange } from "../../util/range.js";
import type { NumberRange } from "../../util/range.js";

export interface SuspectBackoffOptions {
  /** The first wait (the probe round's period), ms. */
  readonly intervalMs: number;
  /** Longest wait between probes of an idle or suspected peer, ms. Default and range: SUSPECT_BACKOFF_DEFAULTS / _RANGES. */
  readonly backoffMaxMs?: number;
  /** Told once per run of suspicion, when a peer's wait first reaches `backoffMaxMs`. */
  readonly onCapped?: (peer: PeerId, waitMs: number) => void;
  readonly random?: () => number;
}

export const SUSPECT_BACKOFF_DEFAULTS = { backoffMaxMs: 10_000 } as const;
export const SUSPECT_BACKOFF_RANGES: Readonly<Record<"backoffMaxMs", NumberRange>> = {
  backoffMaxMs: intRange(10),
};

interface Wait {
  waitMs: number;
  nextMs: number;
}

export class SuspectBackoff {
  readonly #intervalMs: number;
  readonly #maxMs: number;
  readonly #onCapped: ((peer: PeerId, waitMs: number) => void) | undefined;
  readonly #random: () => number;
  readonly #waits = new Map<PeerId, Wait>();

  constructor(options: SuspectBackoffOptions) {
    this.#intervalMs = options.intervalMs;
    this.#maxMs = checkRange(
      "probe.suspectBackoffMaxMs",
      options.backoffMaxMs ?? SUSPECT_BACKOFF_DEFAULTS.backoffMaxMs,
      SUSPECT_BACKOFF_RANGES.backoffMaxMs,
    );
    this.#onCapped = options.onCapped;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Whether `peer` is to be probed now; true counts a probe sent (the next waits longer). A peer that
   * does not `need` a probe (branch outcomes answer for it) is always due (its probes are the caller's
   * to decide) and its backoff starts over.
   */
  due(peer: PeerId, nowMs: number, need: boolean): boolean {
    if (!need) {
      this.#waits.delete(peer);
      return true;
    }
    const w = this.#waits.get(peer);
    if (w !== undefined && nowMs < w.nextMs) return false;
    this.sent(peer, nowMs);
    return true;
  }

  /** A probe of suspected `peer` was sent now (outside `due`, e.g. at its first bad branch). */
  sent(peer: PeerId, nowMs: number): void {
    let w = this.#waits.get(peer);
    if (w === undefined) this.#waits.set(peer, (w = { waitMs: 0, nextMs: 0 }));
    const before = w.waitMs;
    w.waitMs = doubledWait(w.waitMs, this.#intervalMs, this.#maxMs);
    if (w.waitMs === this.#maxMs && before < this.#maxMs) this.#onCapped?.(peer, w.waitMs);
    w.nextMs = nowMs + jittered(w.waitMs, this.#random);
  }

  /**
   * A probe of `peer` was refused (answered at once with an error, nothing listening): it is due again
   * at the next call (the next round), and the wait does not grow. A refusal costs next to nothing and
   * is the evidence ejection counts, so a dead peer is out about `failureThreshold` − 2 rounds after its
   * first failed branch (that branch and the probe it starts count too), not after a doubling backoff,
   * nor a wait plus the round that follows it; only probes that time out back off.
   */
  refused(peer: PeerId): void {
    const w = this.#waits.get(peer);
    if (w === undefined) return;
    w.waitMs = 0;
    w.nextMs = 0;
  }

  forget(peer: PeerId): void {
    this.#waits.delete(peer);
  }

  /** Peers with a backoff running. */
  get size(): number {
    return this.#waits.size;
  }
}
