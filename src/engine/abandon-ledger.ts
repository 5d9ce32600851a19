/**
 * The abandon-cost ledger: the peer work lost to this coordinator's cut branches (`lostWorkMs` of an
 * `abandoned` or `late` record, × `opportunityFactor`), and from it the abandon cost the next fan-outs
 * put into `budget > p99 + abandonCost`. Every cut branch counts whatever the mode; measurement
 * branches and horizon probes are never charged (they are reported apart in `stats()`).
 *
 * `cost(set)` is the expected cost of a fan-out *that cuts*, over the cut fan-outs in a sliding window
 * (the latency book's by default): an unconditional mean would shrink as the rule avoids cutting, and
 * make speculation look cheap. With fewer than `minSamples` cut fan-outs in the window it is the stated
 * prior (`kind: "prior"`), so a quiet coordinator never decides on an old stall. docs/architecture.md
 * ("Abandon cost") gives the formula.
 *
 * @example
 * const ledger = new AbandonLedger({ priorMs: 5, minSamples: 1 });
 * ledger.cost(["a", "b"], clock.now()); // { ms: 5, kind: "prior", samples: 0, ageMs: Infinity }
 * ledger.recordFanout({ mode: "speculate", now: clock.now(), branches: [
 *   { peer: "a", outcome: "committed", lostWorkMs: 0 },
 *   { peer: "b", outcome: "abandoned", lostWorkMs: 80 },
 * ] });
 * ledger.cost(["a", "b"], clock.now()); // { ms: 80, kind: "measured", samples: 1, ageMs: 0 }
 */
import { invalid } from "../errors.js";
import { LATENCY_BOOK_DEFAULTS } from "../estimate/options.js";
import { SliceRing } from "../estimate/slice-ring.js";
import { checkRange, intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { PeerId } from "../estimate/types.js";
import type { Mode } from "../policy/types.js";
import type { BranchOutcome } from "./outcome.js";

/** Defaults and ranges: `ABANDON_LEDGER_DEFAULTS` and `ABANDON_LEDGER_RANGES`. */
export interface AbandonLedgerOptions {
  /** Cost assumed while the window holds fewer than `minSamples` cut fan-outs, ms. */
  priorMs?: number;
  /** Length of the sliding window, ms (by default the latency book's default window). */
  windowMs?: number;
  /** Sub-windows in the ring (a burst is forgotten within windowMs · (1 + 1/slices)). */
  slices?: number;
  /** Fewer fan-outs that cut a branch than this in the window makes the cost unknown (the prior). */
  minSamples?: number;
  /** Multiplier on lost peer-ms (opportunity cost of the cycles consumed). */
  opportunityFactor?: number;
}

export const ABANDON_LEDGER_DEFAULTS: Readonly<Required<AbandonLedgerOptions>> = Object.freeze({
  // No evidence, no charge: the cost the rule weighs is what the ledger measured.
  priorMs: 0,
  // The latency book's window, so that the cost is as fresh as the estimates it is added to.
  windowMs: LATENCY_BOOK_DEFAULTS.windowMs,
  slices: LATENCY_BOOK_DEFAULTS.slices,
  minSamples: 5,
  opportunityFactor: 1,
});

/** The values each option accepts. */
export const ABANDON_LEDGER_RANGES: Readonly<Record<keyof AbandonLedgerOptions, NumberRange>> = Object.freeze(
  {
    priorMs: numberRange(0, 60_000),
    windowMs: numberAbove(0),
    slices: intRange(1, 64),
    minSamples: intRange(1, 1_000_000),
    opportunityFactor: numberRange(0, 1_000_000),
  },
);

/** One branch end, as the ledger needs it (a `BranchRecord` is one). */
export interface LedgerBranch {
  readonly peer: PeerId;
  readonly outcome: BranchOutcome;
  readonly lostWorkMs: number;
  /** A measurement branch: reported, never charged (see the class comment). */
  readonly measurement?: boolean;
  readonly measurementWorkMs?: number;
  /** A horizon probe: cut for the caller, left running to learn the tail; reported, never charged. */
  readonly probe?: boolean;
  /** A horizon probe's peer work, ms. */
  readonly probeWorkMs?: number;
}

export interface LedgerFanout {
  /** The mode the fan-out ran in: only for the by-mode figures of `stats()`; it does not gate learning. */
  readonly mode?: Mode;
  readonly now: number;
  readonly branches: readonly LedgerBranch[];
}

/** What the rule gets: the cost, and whether it was measured or is the stated prior. */
export interface AbandonCost {
  /** Expected cost of cutting a fan-out to the set, ms (>= 0): measured, or `priorMs` while unknown. */
  readonly ms: number;
  /** `measured`: from `samples` >= minSamples cut fan-outs in the window; `prior`: too few, `ms` is the prior. */
  readonly kind: "measured" | "prior";
  /** Fan-outs that cut a branch, in the window. */
  readonly samples: number;
  /** ms since the newest of them was recorded (Infinity when the window holds none). */
  readonly ageMs: number;
}

export interface PeerLedgerStats {
  readonly abandoned: number;
  readonly late: number;
  readonly lostWorkMs: number;
}

/** The window the cost rests on, as of the `now` given to `stats` (or the latest time the ledger saw). */
export interface AbandonLedgerWindow {
  readonly windowMs: number;
  readonly slices: number;
  /** Fan-outs recorded, and those that cut at least one branch (the cost's samples). */
  readonly fanouts: number;
  readonly cutFanouts: number;
  readonly cutBranches: number;
  /** Charged lost work, ms × opportunityFactor. */
  readonly chargedMs: number;
  readonly ageMs: number;
  readonly kind: "measured" | "prior";
}

export interface AbandonLedgerStats {
  readonly window: AbandonLedgerWindow;
  /** Since construction, every mode: fan-outs recorded, those that cut, cut branches, charged ms. */
  readonly fanouts: number;
  readonly cutFanouts: number;
  readonly cutBranches: number;
  readonly chargedMs: number;
  /** Since construction, speculative fan-outs only: recorded, those that cut, their cut branches. */
  readonly speculativeFanouts: number;
  readonly abandonedFanouts: number;
  readonly abandonedBranches: number;
  /** Lost work of the cut branches of fan-outs that did not speculate, ms (charged like any other cut). */
  readonly synchronousLateLostMs: number;
  /** Measurement branches and horizon probes seen (any mode), and the peer work they took, ms (never charged). */
  readonly measurementBranches: number;
  readonly measurementWorkMs: number;
  readonly probeBranches: number;
  readonly probeWorkMs: number;
}

/** Per-slice counts of the window; the window's values are sums over the live slices (no drift). */
class LedgerRing extends SliceRing {
  readonly fanouts: Float64Array;
  readonly cutFanouts: Float64Array;
  readonly cutBranches: Float64Array;
  readonly chargedMs: Float64Array;

  constructor(windowMs: number, slices: number) {
    super(windowMs, slices);
    this.fanouts = new Float64Array(slices);
    this.cutFanouts = new Float64Array(slices);
    this.cutBranches = new Float64Array(slices);
    this.chargedMs = new Float64Array(slices);
  }

  /** Adds one fan-out to the slice of `nowMs`. */
  add(nowMs: number, cutBranches: number, chargedMs: number): void {
    this.advance(nowMs);
    const s = this.slot;
    this.fanouts[s] = (this.fanouts[s] as number) + 1;
    if (cutBranches === 0) return;
    this.cutFanouts[s] = (this.cutFanouts[s] as number) + 1;
    this.cutBranches[s] = (this.cutBranches[s] as number) + cutBranches;
    this.chargedMs[s] = (this.chargedMs[s] as number) + chargedMs;
  }

  protected override evict(s: number): void {
    this.fanouts[s] = 0;
    this.cutFanouts[s] = 0;
    this.cutBranches[s] = 0;
    this.chargedMs[s] = 0;
  }

  protected override clearAll(): void {
    this.fanouts.fill(0);
    this.cutFanouts.fill(0);
    this.cutBranches.fill(0);
    this.chargedMs.fill(0);
  }
}

function sum(a: Float64Array): number {
  let total = 0;
  for (let i = 0; i < a.length; i++) total += a[i] as number;
  return total;
}

export class AbandonLedger {
  readonly options: Readonly<Required<AbandonLedgerOptions>>;
  readonly #ring: LedgerRing;
  #lastCutAt = -Infinity;
  /** The latest clock time seen (record, cost or stats): what `stats()` without `now` is as of. */
  #seenAt = -Infinity;
  #fanouts = 0;
  #cutFanouts = 0;
  #cutBranches = 0;
  #chargedMs = 0;
  #speculativeFanouts = 0;
  #abandonedFanouts = 0;
  #abandonedBranches = 0;
  #syncLateLostMs = 0;
  #measurementBranches = 0;
  #measurementWorkMs = 0;
  #probeBranches = 0;
  #probeWorkMs = 0;
  readonly #peers = new Map<PeerId, { abandoned: number; late: number; lostWorkMs: number }>();

  /** @throws TailswarmError INVALID_ARGUMENT naming an unknown option or a bad value. */
  constructor(options: AbandonLedgerOptions = {}) {
    this.options = abandonLedgerOptions(options);
    this.#ring = new LedgerRing(this.options.windowMs, this.options.slices);
  }

  /**
   * The expected cost of cutting a fan-out to `peers` (or to that many peers) at `now`, and what it rests
   * on. Cheap: a few sums over the slices.
   */
  cost(peers: readonly PeerId[] | number, now: number): AbandonCost {
    const ring = this.#ring;
    ring.advance(now);
    if (now > this.#seenAt) this.#seenAt = now;
    const samples = sum(ring.cutFanouts);
    const ageMs = samples > 0 ? Math.max(0, now - this.#lastCutAt) : Infinity;
    if (samples < this.options.minSamples) return { ms: this.options.priorMs, kind: "prior", samples, ageMs };
    const size = Math.max(typeof peers === "number" ? peers : peers.length, 1);
    const branches = sum(ring.cutBranches);
    const perBranch = sum(ring.chargedMs) / branches;
    return { ms: perBranch * Math.min(size, branches / samples), kind: "measured", samples, ageMs };
  }

  /** `cost(peers, now).ms`: the number the rule adds to p99. */
  expectedAbandonCostMs(peers: readonly PeerId[] | number, now: number): number {
    return this.cost(peers, now).ms;
  }

  /**
   * Records the ends of one fan-out's branches, once all of them have settled, whatever its mode: its cut
   * branches (`abandoned`, `late`) are charged; measurement branches and horizon probes are not.
   */
  recordFanout(fanout: LedgerFanout): void {
    let charged = 0;
    let cut = 0;
    for (const b of fanout.branches) {
      if (b.probe === true) {
        this.#probeBranches++;
        this.#probeWorkMs += positivePart(b.probeWorkMs);
        continue;
      }
      if (b.measurement === true) {
        this.#measurementBranches++;
        this.#measurementWorkMs += positivePart(b.measurementWorkMs);
        continue;
      }
      if (b.outcome !== "abandoned" && b.outcome !== "late") continue;
      const ms = positivePart(b.lostWorkMs);
      const peer = this.#peer(b.peer);
      if (b.outcome === "abandoned") peer.abandoned++;
      else peer.late++;
      peer.lostWorkMs += ms;
      if (fanout.mode !== undefined && fanout.mode !== "speculate") this.#syncLateLostMs += ms;
      charged += ms * this.options.opportunityFactor;
      cut++;
    }
    this.#ring.add(fanout.now, cut, charged);
    if (fanout.now > this.#seenAt) this.#seenAt = fanout.now;
    this.#fanouts++;
    if (fanout.mode === "speculate") this.#speculativeFanouts++;
    if (cut === 0) return;
    if (fanout.now > this.#lastCutAt) this.#lastCutAt = fanout.now;
    this.#cutFanouts++;
    this.#cutBranches += cut;
    this.#chargedMs += charged;
    if (fanout.mode === "speculate") {
      this.#abandonedFanouts++;
      this.#abandonedBranches += cut;
    }
  }

  /** The ledger's figures; the window as of `now` when given (else as of the latest time it saw). */
  stats(now?: number): AbandonLedgerStats {
    const ring = this.#ring;
    if (now !== undefined) {
      ring.advance(now);
      if (now > this.#seenAt) this.#seenAt = now;
    }
    const cutFanouts = sum(ring.cutFanouts);
    const at = now ?? this.#seenAt;
    return {
      window: {
        windowMs: this.options.windowMs,
        slices: this.options.slices,
        fanouts: sum(ring.fanouts),
        cutFanouts,
        cutBranches: sum(ring.cutBranches),
        chargedMs: sum(ring.chargedMs),
        ageMs: cutFanouts > 0 ? Math.max(0, at - this.#lastCutAt) : Infinity,
        kind: cutFanouts >= this.options.minSamples ? "measured" : "prior",
      },
      fanouts: this.#fanouts,
      cutFanouts: this.#cutFanouts,
      cutBranches: this.#cutBranches,
      chargedMs: this.#chargedMs,
      speculativeFanouts: this.#speculativeFanouts,
      abandonedFanouts: this.#abandonedFanouts,
      abandonedBranches: this.#abandonedBranches,
      synchronousLateLostMs: this.#syncLateLostMs,
      measurementBranches: this.#measurementBranches,
      measurementWorkMs: this.#measurementWorkMs,
      probeBranches: this.#probeBranches,
      probeWorkMs: this.#probeWorkMs,
    };
  }

  /** Since construction: the peer's cut branches and the work it lost to them, ms. */
  peerStats(peer: PeerId): PeerLedgerStats {
    const p = this.#peers.get(peer);
    return p === undefined ? { abandoned: 0, late: 0, lostWorkMs: 0 } : { ...p };
  }

  #peer(peer: PeerId): { abandoned: number; late: number; lostWorkMs: number } {
    let p = this.#peers.get(peer);
    if (p === undefined) {
      p = { abandoned: 0, late: 0, lostWorkMs: 0 };
      this.#peers.set(peer, p);
    }
    return p;
  }
}

/** The positive part of a reported work figure: 0 when it is missing, not finite, or <= 0. */
function positivePart(ms: number | undefined): number {
  return ms !== undefined && Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * The options with their defaults, each checked against `ABANDON_LEDGER_RANGES`.
 * @throws TailswarmError INVALID_ARGUMENT naming an unknown option or a bad value.
 */
export function abandonLedgerOptions(
  options: AbandonLedgerOptions,
): Readonly<Required<AbandonLedgerOptions>> {
  const known = Object.keys(ABANDON_LEDGER_RANGES);
  for (const [key, value] of Object.entries(options)) {
    if (!known.includes(key)) {
      throw invalid(`abandonLedger.${key}`, value, `a known option (one of ${known.join(", ")})`);
    }
  }
  return Object.freeze({
    priorMs: option(options, "priorMs"),
    windowMs: option(options, "windowMs"),
    slices: option(options, "slices"),
    minSamples: option(options, "minSamples"),
    opportunityFactor: option(options, "opportunityFactor"),
  });
}

function option(options: AbandonLedgerOptions, key: keyof AbandonLedgerOptions): number {
  return checkRange(
    `abandonLedger.${key}`,
    options[key] ?? ABANDON_LEDGER_DEFAULTS[key],
    ABANDON_LEDGER_RANGES[key],
    { code: "INVALID_ARGUMENT" },
  );
}
