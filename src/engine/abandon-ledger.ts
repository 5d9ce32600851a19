/**
 * The abandon-cost ledger: the work peers really lost when this coordinator gave up on their branches,
 * and from it the `abandonCostMs` the next fan-outs put into the rule `budget > p99 + abandonCost`.
 *
 * What it counts. The seed defines abandon cost as "the work lost plus the opportunity cost of the
 * peers' cycles consumed by the abandoned branch". Both are measured in peer-milliseconds: the ms a
 * peer had spent serving a branch when it was told to stop (`lostWorkMs` of an `abandoned` or
 * `deadline` BranchResult) is work lost, and those same ms are cycles the peer could have spent on
 * other work. The ledger charges `lostWorkMs × opportunityFactor` per branch (factor default 1: one
 * peer-ms lost costs one ms; raise it when peers are saturated and a lost ms displaces queued work).
 * Queueing time is not work and is not charged.
 *
 * Which fan-outs count. Only speculative fan-outs feed the estimate (abandoning is what speculation
 * pays; a synchronous fan-out's late branches are counted separately in `stats()`, not in the cost).
 * The estimate is conditional: expected cost *of a fan-out that abandons*, i.e.
 *   (EWMA of cost per abandoned branch) × min(|peers|, EWMA of abandoned branches per abandoned fan-out)
 * which is what the rule needs: the budget must cover the tail *and* the cost of abandoning at it.
 * It starts at `priorMs` (as one abandoned branch of that cost) and, without new evidence, decays
 * back toward the prior with half-life `halfLifeMs` (an old quiet period says little about now).
 *
 * Measurement branches (`measurement: true`: given up by the decision but left running so the peer's
 * latency is learnt) are not abandons: nobody stopped them and no work was lost, so they are neither
 * charged nor counted as abandoned branches. Their peer work — the deliberate price of fresh estimates —
 * is reported apart in `stats().measurementBranches` / `measurementWorkMs`.
 *
 * @example
 * const ledger = new AbandonLedger({ priorMs: 5 });
 * ledger.expectedAbandonCostMs(["a", "b"], clock.now()); // 5
 * ledger.recordFanout({ mode: "speculate", now: clock.now(), branches: [
 *   { peer: "a", outcome: "committed", lostWorkMs: 0 },
 *   { peer: "b", outcome: "abandoned", lostWorkMs: 80 },
 * ] });
 * ledger.expectedAbandonCostMs(["a", "b"], clock.now()); // 5 + 0.2 × (80 − 5) = 20
 */
import { TailswarmError } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import type { Mode } from "../policy/types.js";
import type { BranchOutcome } from "./outcome.js";

export interface AbandonLedgerOptions {
  /** Cost assumed before any evidence, ms per abandoned fan-out. Default 0. */
  priorMs?: number;
  /** EWMA weight of a new observation, in (0, 1]. Default 0.2. */
  alpha?: number;
  /** Without new evidence the estimate decays toward the prior with this half-life, ms. Default 60_000. */
  halfLifeMs?: number;
  /** Multiplier on lost peer-ms (opportunity cost of the cycles consumed). Default 1. */
  opportunityFactor?: number;
}

/** One branch end, as the ledger needs it. */
export interface LedgerBranch {
  readonly peer: PeerId;
  readonly outcome: BranchOutcome;
  readonly lostWorkMs: number;
  /** A measurement branch: reported, never charged (see the class comment). */
  readonly measurement?: boolean;
  readonly measurementWorkMs?: number;
}

export interface LedgerFanout {
  readonly mode: Mode;
  readonly now: number;
  readonly branches: readonly LedgerBranch[];
}

export interface PeerLedgerStats {
  readonly abandoned: number;
  readonly late: number;
  readonly lostWorkMs: number;
}

export interface AbandonLedgerStats {
  readonly speculativeFanouts: number;
  /** Speculative fan-outs that abandoned at least one branch (or lost work to a deadline). */
  readonly abandonedFanouts: number;
  readonly abandonedBranches: number;
  /** Lost work charged to speculation (the cost), ms × opportunityFactor. */
  readonly chargedMs: number;
  /** Lost work of late branches in synchronous fan-outs (reported, not charged), ms. */
  readonly synchronousLateLostMs: number;
  /** Measurement branches seen (any mode), and the peer work they took, ms (reported, not charged). */
  readonly measurementBranches: number;
  readonly measurementWorkMs: number;
}

export class AbandonLedger {
  readonly #priorMs: number;
  readonly #alpha: number;
  readonly #halfLifeMs: number;
  readonly #factor: number;
  #costPerBranch: number;
  #branchesPerFanout = 1;
  #updatedAt: number | undefined;
  #speculativeFanouts = 0;
  #abandonedFanouts = 0;
  #abandonedBranches = 0;
  #chargedMs = 0;
  #syncLateLostMs = 0;
  #measurementBranches = 0;
  #measurementWorkMs = 0;
  readonly #peers = new Map<PeerId, { abandoned: number; late: number; lostWorkMs: number }>();

  constructor(options: AbandonLedgerOptions = {}) {
    this.#priorMs = check("priorMs", options.priorMs ?? 0, 0, Infinity);
    this.#alpha = check("alpha", options.alpha ?? 0.2, Number.MIN_VALUE, 1);
    this.#halfLifeMs = check("halfLifeMs", options.halfLifeMs ?? 60_000, Number.MIN_VALUE, Infinity, true);
    this.#factor = check("opportunityFactor", options.opportunityFactor ?? 1, 0, Infinity);
    this.#costPerBranch = this.#priorMs;
  }

  /**
   * Expected cost of abandoning a fan-out to `peers` at `now`, ms (>= 0). Cheap: a few multiplications.
   */
  expectedAbandonCostMs(peers: readonly PeerId[] | number, now: number): number {
    const size = typeof peers === "number" ? peers : peers.length;
    const branches = Math.min(Math.max(size, 1), this.#branchesPerFanout);
    const estimate = this.#costPerBranch * branches;
    if (this.#updatedAt === undefined || this.#halfLifeMs === Infinity) return estimate;
    const age = Math.max(0, now - this.#updatedAt);
    const keep = Math.pow(2, -age / this.#halfLifeMs);
    return this.#priorMs + (estimate - this.#priorMs) * keep;
  }

  /** Records the ends of one fan-out's branches, once all of them have settled. */
  recordFanout(fanout: LedgerFanout): void {
    let lost = 0;
    let abandoned = 0;
    for (const b of fanout.branches) {
      if (b.measurement === true) {
        this.#measurementBranches++;
        const w = b.measurementWorkMs;
        if (w !== undefined && Number.isFinite(w) && w > 0) this.#measurementWorkMs += w;
        continue;
      }
      if (b.outcome !== "abandoned" && b.outcome !== "late") continue;
      const ms = Number.isFinite(b.lostWorkMs) && b.lostWorkMs > 0 ? b.lostWorkMs : 0;
      const peer = this.#peer(b.peer);
      if (b.outcome === "abandoned") peer.abandoned++;
      else peer.late++;
      peer.lostWorkMs += ms;
      if (fanout.mode !== "speculate") {
        this.#syncLateLostMs += ms;
        continue;
      }
      lost += ms * this.#factor;
      abandoned++;
    }
    if (fanout.mode !== "speculate") return;
    this.#speculativeFanouts++;
    if (abandoned === 0) return;
    this.#abandonedFanouts++;
    this.#abandonedBranches += abandoned;
    this.#chargedMs += lost;
    // Fold the decay since the last update into the running values before adding the observation.
    const decayed = this.expectedAbandonCostMs(this.#branchesPerFanout, fanout.now);
    const perBranchNow = this.#branchesPerFanout > 0 ? decayed / this.#branchesPerFanout : decayed;
    const a = this.#alpha;
    this.#costPerBranch = perBranchNow + a * (lost / abandoned - perBranchNow);
    this.#branchesPerFanout += a * (abandoned - this.#branchesPerFanout);
    this.#updatedAt = fanout.now;
  }

  stats(): AbandonLedgerStats {
    return {
      speculativeFanouts: this.#speculativeFanouts,
      abandonedFanouts: this.#abandonedFanouts,
      abandonedBranches: this.#abandonedBranches,
      chargedMs: this.#chargedMs,
      synchronousLateLostMs: this.#syncLateLostMs,
      measurementBranches: this.#measurementBranches,
      measurementWorkMs: this.#measurementWorkMs,
    };
  }

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

function check(field: string, value: number, min: number, max: number, allowInfinity = false): number {
  const ok =
    typeof value === "number" &&
    !Number.isNaN(value) &&
    value >= min &&
    value <= max &&
    (allowInfinity || Number.isFinite(value));
  if (!ok) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `AbandonLedger option ${field}: got ${String(value)}, expected a number in [${min}, ${max}]`,
    );
  }
  return value;
}
