/**
 * The horizon-probe budget. A branch cut at its fan-out's deadline teaches the latency book only
 * "latency > budget", so a coordinator alone never sees a tail longer than its own budget. A probe is a
 * cut branch left running on the peer (the peer is not told to abandon it; its request carried a longer
 * deadline, issue time + `maxMs`) whose late completion is recorded as a sample; its answer is discarded,
 * the caller does not wait, and it is never charged to the abandon ledger.
 *
 * Bounded twice: each cut branch earns `share` of a probe (credit capped at one), and at most
 * `maxPerPeerPerWindow` probes start per peer per `windowMs`. Only a branch to a peer whose p99 is a lower
 * bound is a candidate (a known tail needs no probe), and a candidate becomes a probe only when cut at
 * the deadline with credit in hand; the other candidates are abandoned at the deadline as usual.
 */
import { checkRange, intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { PeerId } from "../estimate/types.js";

/** Defaults and ranges: `HORIZON_PROBE_DEFAULTS` and `HORIZON_PROBE_RANGES`. */
export interface HorizonProbeOptions {
  /** Probes per branch cut at the deadline (0 turns probes off). */
  share?: number;
  /** Probes started per peer per window, at most. */
  maxPerPeerPerWindow?: number;
  /** A probe's own deadline on the peer: issue time + this, ms. */
  maxMs?: number;
  /** The window of `maxPerPeerPerWindow`, ms. */
  windowMs?: number;
}

export const HORIZON_PROBE_DEFAULTS: Readonly<Required<HorizonProbeOptions>> = Object.freeze({
  share: 0.02,
  maxPerPeerPerWindow: 3,
  maxMs: 2_000,
  windowMs: 10_000,
});

export const HORIZON_PROBE_RANGES: Readonly<Record<keyof HorizonProbeOptions, NumberRange>> = Object.freeze({
  share: numberRange(0, 1),
  maxPerPeerPerWindow: intRange(0, 1_000),
  maxMs: numberRange(1, 60_000),
  windowMs: numberAbove(0),
});

/** Probes since the coordinator started: issued = completed + expired + still running. */
export interface HorizonProbeStats {
  readonly issued: number;
  readonly completed: number;
  readonly expired: number;
}

export class HorizonProbes {
  readonly options: Readonly<Required<HorizonProbeOptions>>;
  /** Probes earned (the first cut may probe). */
  #credit = 1;
  /** Start times of each peer's probes in the window. */
  readonly #started = new Map<PeerId, number[]>();
  #issued = 0;
  #completed = 0;
  #expired = 0;

  /** @throws TailswarmError INVALID_CONFIG naming the bad key, its value and what was expected. */
  constructor(options: HorizonProbeOptions = {}) {
    const o = { ...HORIZON_PROBE_DEFAULTS, ...options };
    for (const key of Object.keys(HORIZON_PROBE_RANGES) as (keyof HorizonProbeOptions)[]) {
      checkRange(`horizonProbe.${key}`, o[key], HORIZON_PROBE_RANGES[key], {
        source: "HorizonProbes options",
      });
    }
    this.options = Object.freeze(o);
  }

  /** Whether a branch to `peer` issued now may become a probe (the caller knows its p99 is a lower bound). */
  candidate(peer: PeerId, now: number): boolean {
    return this.options.share > 0 && this.#credit >= 1 && this.#room(peer, now);
  }

  /** A candidate branch to `peer` was cut at the deadline: true makes it a probe (and spends the credit). */
  take(peer: PeerId, now: number): boolean {
    if (this.#credit < 1 || !this.#room(peer, now)) return false;
    this.#credit -= 1;
    const list = this.#started.get(peer) ?? [];
    list.push(now);
    this.#started.set(peer, list);
    this.#issued++;
    return true;
  }

  /** `n` branches were cut at a deadline: each earns `share` of a probe. */
  cut(n: number): void {
    this.#credit = Math.min(1, this.#credit + n * this.options.share);
  }

  /** A probe ended: its answer arrived (`completed`) or it did not within `maxMs` (`expired`). */
  ended(completed: boolean): void {
    if (completed) this.#completed++;
    else this.#expired++;
  }

  stats(): HorizonProbeStats {
    return { issued: this.#issued, completed: this.#completed, expired: this.#expired };
  }

  #room(peer: PeerId, now: number): boolean {
    const list = this.#started.get(peer);
    if (list === undefined) return this.options.maxPerPeerPerWindow > 0;
    const from = now - this.options.windowMs;
    while (list.length > 0 && (list[0] as number) <= from) list.shift();
    if (list.length === 0) this.#started.delete(peer);
    return list.length < this.options.maxPerPeerPerWindow;
  }
}
