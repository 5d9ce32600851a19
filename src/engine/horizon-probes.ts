/**
 * The horizon-probe budget. A branch cut at its fan-out's deadline teaches the latency book only
 * "latency > budget", so a coordinator alone never sees a tail longer than its own budget. A probe is a
 * cut branch left running on the peer (the peer is not told to abandon it; its request carried a longer
 * deadline, issue time + `maxMs`) whose late completion is recorded as a sample; its answer is discarded,
 * the caller does not wait, and it is never charged to the abandon ledger.
 *
 * Who may probe (`share` 0 turns probes off): each peer whose branches are being cut gets its first
 * `minPerPeerPerWindow` probes of every window as of right, so a few completions beyond the horizon
 * reach each slow peer's window however rare cuts are; beyond those, each cut branch earns `share` of a
 * probe (credit capped at one). Bounded three times: `maxPerPeerPerWindow` per peer and `maxPerWindow` in
 * all per `windowMs`, and `maxPerFanout` per fan-out (refusals by any are counted, `capped`). Only a
 * branch to a peer whose p99 is a lower bound is a candidate (a known tail needs no probe), and a
 * candidate becomes a probe only when cut at the deadline; the other candidates are abandoned at the
 * deadline as usual.
 *
 * A cut starts only the probes its own observation needs (`probesToPassCut`), at most `maxPerFanout`,
 * whatever is owed. An observed fan-out records the k-th smallest of its branches' lower bounds, so an
 * all-of-n fan-out is placed past its cut by any one probe's late answer; more only raise its bound by the
 * spread among its cut peers (little, for peers queued behind one gateway). Probes a cut does not need are
 * left for the window's later cuts: cuts come in bursts (a gateway episode cuts every fan-out issued
 * during it, several side by side), and three probes a cut spent a peer's `minPerPeerPerWindow` on the
 * burst's first fan-outs, leaving the rest observed only as "longer than the budget", just past it. A
 * fan-out's probes go to its cut candidates with the fewest probes started in the window (ties in issue
 * order), so the members' own windows are filled evenly too, and fan-outs cut side by side probe
 * different peers.
 *
 * A stalled cut owes nothing (`stalledCut`): when the caller's own event loop ran late past the deadline
 * and most of the fan-out was cut with it, the cut says little of each peer's tail, and owing every one of
 * them a probe spends `maxPerWindow` in one instant, leaving the peers that are slow on their own capped
 * for the rest of the window; such cuts probe by credit only. A fan-out cut whole on time (every peer
 * slower than the budget) still owes: those are the peers probes exist for.
 *
 * A peer has at most `maxInFlightPerPeer` probes running; while it has, its branches are not candidates
 * (no longer deadline is sent), counted in `busy`. Cuts come in bursts — one slow stretch of a peer
 * cuts every fan-out issued during it, several at once when fan-outs run side by side — and probes
 * started in one stretch all end with it: they would spend a window's budget on one late completion. One at a time spreads the budget over distinct slow stretches, which is what
 * places a tail quantile beyond the budget.
 */
import { checkRange, intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { PeerId } from "../estimate/types.js";
import type { LimitListener } from "./limit-listener.js";
import { RunningCounts } from "../util/running-counts.js";

/** Defaults and ranges: `HORIZON_PROBE_DEFAULTS` and `HORIZON_PROBE_RANGES`. */
export interface HorizonProbeOptions {
  /** Probes per branch cut at the deadline (0 turns probes off). */
  share?: number;
  /** Probes a peer whose branches are cut may start per window whatever the credit. */
  minPerPeerPerWindow?: number;
  /** Probes started per peer per window, at most. */
  maxPerPeerPerWindow?: number;
  /** Probes started per window over all peers, at most. */
  maxPerWindow?: number;
  /** Probes started by one fan-out's cut, at most. */
  maxPerFanout?: number;
  /** Probes of one peer running at once, at most. */
  maxInFlightPerPeer?: number;
  /** A probe's own deadline on the peer: issue time + this, ms. */
  maxMs?: number;
  /** The window of `maxPerPeerPerWindow`, ms. */
  windowMs?: number;
}

export const HORIZON_PROBE_DEFAULTS: Readonly<Required<HorizonProbeOptions>> = Object.freeze({
  share: 0.02,
  minPerPeerPerWindow: 4,
  maxPerPeerPerWindow: 6,
  maxPerWindow: 30,
  maxPerFanout: 3,
  maxInFlightPerPeer: 1,
  maxMs: 2_000,
  windowMs: 10_000,
});

export const HORIZON_PROBE_RANGES: Readonly<Record<keyof HorizonProbeOptions, NumberRange>> = Object.freeze({
  share: numberRange(0, 1),
  minPerPeerPerWindow: intRange(0, 1_000),
  maxPerPeerPerWindow: intRange(0, 1_000),
  maxPerWindow: intRange(0, 1_000_000),
  maxPerFanout: intRange(0, 1_000_000),
  maxInFlightPerPeer: intRange(1, 1_000),
  maxMs: numberRange(1, 60_000),
  windowMs: numberAbove(0),
});

/**
 * Probes since the coordinator started: issued = completed + expired + still running; `capped`, candidates
 * cut at the deadline that a cap kept from probing (`maxPerFanout`, `maxPerPeerPerWindow`, `maxPerWindow`,
 * or `maxInFlightPerPeer` reached since the branch was issued); `busy`, branches not made candidates because
 * their peer had `maxInFlightPerPeer` probes running.
 */
export interface HorizonProbeStats {
  readonly issued: number;
  readonly completed: number;
  readonly expired: number;
  readonly capped: number;
  readonly busy: number;
}

/**
 * How many of a cut fan-out's candidates to keep as probes so that its observation can pass the cut:
 * with `stillNeeded` answers short of its requirement and `cut` branches cut at the deadline, the k-th
 * smallest of its branches' lower bounds (`ObservedFanout`) lies past the cut only when fewer than
 * `stillNeeded` cut branches stay bounded at the cut, so cut − stillNeeded + 1 must run on. All of n
 * (every cut branch still needed): one. At least one, a requirement met included: a probe still teaches
 * the peer's tail. Only `candidates` of the cut may run on (the others' peers have a known tail): when
 * they are too few to pass the cut, one, for the peer's tail alone, and the rest are left for later cuts.
 */
export function probesToPassCut(cut: number, stillNeeded: number, candidates = cut): number {
  const pass = stillNeeded <= 0 ? 1 : Math.max(1, cut - stillNeeded + 1);
  return pass > candidates ? 1 : pass;
}

/**
 * Whether a fan-out's cut at its deadline was a stall of the caller rather than its peers' own latency:
 * more than half of a fan-out of several was cut, and the deadline was noticed late by more than a tenth
 * of the budget (at least 1 ms) — the event loop was held, so answers may have been waiting unread.
 */
export function stalledCut(cut: number, branches: number, lateMs: number, budgetMs: number): boolean {
  return cut > Math.max(1, branches / 2) && lateMs > Math.max(1, budgetMs / 10);
}

export class HorizonProbes {
  readonly options: Readonly<Required<HorizonProbeOptions>>;
  readonly #onLimit: LimitListener | undefined;
  /** Probes earned (the first cut may probe). */
  #credit = 1;
  /** Start times of each peer's probes in the window. */
  readonly #started = new Map<PeerId, number[]>();
  /** Start times of every probe in the window. */
  readonly #all: number[] = [];
  /** Probes running per peer (absent: none). */
  readonly #running = new RunningCounts<PeerId>();
  #issued = 0;
  #capped = 0;
  #busy = 0;
  #completed = 0;
  #expired = 0;

  /** @throws TailswarmError INVALID_CONFIG naming the bad key, its value and what was expected. */
  constructor(options: HorizonProbeOptions = {}, onLimit?: LimitListener) {
    this.#onLimit = onLimit;
    const o = { ...HORIZON_PROBE_DEFAULTS, ...options };
    for (const key of Object.keys(HORIZON_PROBE_RANGES) as (keyof HorizonProbeOptions)[]) {
      checkRange(`horizonProbe.${key}`, o[key], HORIZON_PROBE_RANGES[key], {
        source: "HorizonProbes options",
      });
    }
    this.options = Object.freeze(o);
  }

  #limit(
    key: "maxPerFanout" | "maxPerPeerPerWindow" | "maxPerWindow" | "maxInFlightPerPeer",
    peer: PeerId,
  ): void {
    const max = this.options[key];
    this.#onLimit?.(
      `horizonProbe.${key}`,
      key === "maxPerFanout" ? { max, peer } : { max, peer, windowMs: this.options.windowMs },
    );
  }

  /**
   * Whether a branch to `peer` issued now may become a probe (the caller knows its p99 is a lower bound):
   * the peer is owed one of its `minPerPeerPerWindow`, or a probe's credit is in hand, and it has fewer
   * than `maxInFlightPerPeer` probes running (else counted `busy`). The window caps are checked when it is
   * cut (`take`), so that a refusal by them is counted.
   */
  candidate(peer: PeerId, now: number): boolean {
    if (this.options.share === 0 || !(this.#owed(peer, now) || this.#credit >= 1)) return false;
    if (this.#running.of(peer) >= this.options.maxInFlightPerPeer) {
      this.#busy++;
      this.#limit("maxInFlightPerPeer", peer);
      return false;
    }
    return true;
  }

  /**
   * One fan-out's candidate branches to `peers` were cut at the deadline: which become probes (true at the
   * same index). At most `wanted` do (`probesToPassCut`; default `maxPerFanout`), and never more than
   * `maxPerFanout` whatever is owed: they are tried in order of the fewest probes started in the window
   * (ties in the order given), each as `take`. When `maxPerFanout` is what stops them, the candidates left
   * are refused by it (counted in `capped`, as many as the cut wanted beyond the cap) if a probe was owed
   * or credit was in hand; candidates the cut did not need are not refused.
   */
  takeCut(peers: readonly PeerId[], now: number, stalled = false, wanted = Infinity): boolean[] {
    const kept = peers.map(() => false);
    if (this.options.share === 0 || peers.length === 0) return kept;
    const limit = Math.min(wanted, this.options.maxPerFanout);
    // the cap refuses only what the cut wanted beyond it
    let refusable = wanted - limit;
    const started = peers.map((p) => this.#inWindow(p, now));
    const order = peers.map((_, i) => i).sort((a, b) => (started[a] as number) - (started[b] as number));
    let taken = 0;
    for (const i of order) {
      const peer = peers[i] as PeerId;
      if (taken < limit) {
        if (this.take(peer, now, stalled)) {
          kept[i] = true;
          taken++;
        }
      } else if (refusable <= 0) break;
      else if ((!stalled && this.#owed(peer, now)) || this.#credit >= 1) {
        refusable--;
        this.#capped++;
        this.#limit("maxPerFanout", peer);
      }
    }
    return kept;
  }

  /**
   * A candidate branch to `peer` was cut at the deadline: true makes it a probe — one the peer is owed, or
   * one paid with credit — unless a cap refuses it (counted in `capped`). `stalled`: the cut was a stall
   * of the caller (`stalledCut`), so nothing is owed.
   */
  take(peer: PeerId, now: number, stalled = false): boolean {
    if (this.options.share === 0) return false;
    const owed = !stalled && this.#owed(peer, now);
    if (!owed && this.#credit < 1) return false;
    const cap =
      this.#inWindow(peer, now) >= this.options.maxPerPeerPerWindow
        ? "maxPerPeerPerWindow"
        : !this.#globalRoom(now)
          ? "maxPerWindow"
          : this.#running.of(peer) >= this.options.maxInFlightPerPeer
            ? "maxInFlightPerPeer"
            : undefined;
    if (cap !== undefined) {
      this.#capped++;
      this.#limit(cap, peer);
      return false;
    }
    if (!owed) this.#credit -= 1;
    const list = this.#started.get(peer) ?? [];
    list.push(now);
    this.#started.set(peer, list);
    this.#all.push(now);
    this.#running.started(peer);
    this.#issued++;
    return true;
  }

  /** `n` branches were cut at a deadline: each earns `share` of a probe. */
  cut(n: number): void {
    this.#credit = Math.min(1, this.#credit + n * this.options.share);
  }

  /** A probe to `peer` ended: its answer arrived (`completed`) or it did not within `maxMs` (`expired`). */
  ended(peer: PeerId, completed: boolean): void {
    if (completed) this.#completed++;
    else this.#expired++;
    this.#running.ended(peer);
  }

  stats(): HorizonProbeStats {
    return {
      issued: this.#issued,
      completed: this.#completed,
      expired: this.#expired,
      capped: this.#capped,
      busy: this.#busy,
    };
  }

  /** The peer has had fewer than `minPerPeerPerWindow` probes in the window. */
  #owed(peer: PeerId, now: number): boolean {
    return this.#inWindow(peer, now) < this.options.minPerPeerPerWindow;
  }

  /** Probes `peer` started in the window ending now. */
  #inWindow(peer: PeerId, now: number): number {
    const list = this.#started.get(peer);
    if (list === undefined) return 0;
    dropBefore(list, now - this.options.windowMs);
    if (list.length === 0) this.#started.delete(peer);
    return list.length;
  }

  #globalRoom(now: number): boolean {
    dropBefore(this.#all, now - this.options.windowMs);
    return this.#all.length < this.options.maxPerWindow;
  }
}

/** Drops the start times at or before `from` (ascending). */
function dropBefore(list: number[], from: number): void {
  let n = 0;
  while (n < list.length && (list[n] as number) <= from) n++;
  if (n > 0) list.splice(0, n);
}
