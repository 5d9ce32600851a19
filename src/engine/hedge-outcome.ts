/** Contract of a replicated fan-out's results and of its observer hook (src/engine/hedge-fanout.ts). */
import type { PeerId } from "../estimate/types.js";
import type { HedgeDecision, HedgePolicyName, HedgeReason } from "../hedge/types.js";
import type { BranchRecord } from "./outcome.js";

/** One hedging decision that settled something: a backup sent, or a backup refused for good. */
export interface HedgeDecisionRecord {
  readonly fanoutId: string;
  readonly policy: HedgePolicyName;
  /** The branch's peer the backup would back up, and the spare replica it would go to. */
  readonly primary: PeerId;
  readonly backup: PeerId;
  /** ms since the fan-out started. */
  readonly atMs: number;
  readonly decision: HedgeDecision;
}

/** A backup that was sent, and how it ended. */
export interface BackupRecord {
  readonly peer: PeerId;
  readonly backs: PeerId;
  readonly branchId: string;
  readonly sentAtMs: number;
  readonly reason: HedgeReason;
  /** By the gated rule's first test at the moment it was sent (see `HedgeDecision.landable`). */
  readonly landable: boolean;
  /** Its answer was among the first k: it won; otherwise it lost (cut, late, or failed). */
  readonly won: boolean;
}

export interface HedgedOutcome {
  readonly fanoutId: string;
  readonly policy: HedgePolicyName;
  readonly k: number;
  readonly replicas: number;
  readonly primaries: readonly PeerId[];
  /** The first k answers (fewer when the deadline came first), by peer. */
  readonly answers: ReadonlyMap<PeerId, unknown>;
  readonly budgetMs: number;
  readonly elapsedMs: number;
  /** Fewer than k answers by the deadline. */
  readonly deadlineMissed: boolean;
  /** The records at return; losers still settling are `unsettled` (their lost work arrives in `settled`). */
  readonly branches: readonly BranchRecord[];
  readonly backups: readonly BackupRecord[];
  readonly decisions: readonly HedgeDecisionRecord[];
  /**
   * Resolves when every branch has settled: each loser's real lost work, as charged to the abandon
   * ledger (ms), and the settled records.
   */
  readonly settled: Promise<HedgedSettlement>;
}

export interface HedgedSettlement {
  readonly branches: readonly BranchRecord[];
  /** Lost work of the cut branches (the losers and any cut at the deadline), ms, as charged. */
  readonly abandonCostMs: number;
}

/** Counters since construction (what telemetry exports). */
export interface HedgeStats {
  readonly fanouts: number;
  readonly primaries: number;
  readonly issued: number;
  readonly won: number;
  readonly lost: number;
  /** Backups sent that could not land by the gated rule's first test. */
  readonly unlandable: number;
  readonly refused: Readonly<Partial<Record<HedgeReason, number>>>;
}

/** Hooks of a replicated fan-out; every method is optional and must not throw (errors are swallowed). */
export interface HedgeObserver {
  onHedgeDecision?(record: HedgeDecisionRecord): void;
  onHedgedFanoutEnd?(outcome: HedgedOutcome): void;
  onHedgedFanoutSettled?(fanoutId: string, settlement: HedgedSettlement): void;
}
