/** Contract of src/hedge — whether a backup branch is sent to a spare replica, and why. */
import type { PeerEstimate, PeerId } from "../estimate/types.js";

/**
 * The hedging policies, all behind one interface (`decideBackup`):
 * - `gated`: the budget-gated rule (docs/hedging.md) — a backup only when it can land within the
 *   remaining budget and the primary's conditional tail makes the expected gain exceed the cost;
 * - `none`: never a backup;
 * - `fixed-delay`: gRPC A6's `hedgingDelay` — a backup once the branch has been out `delayMs`;
 * - `percentile`: Finagle's BackupRequestFilter — a backup at the `1 − maxExtraLoad` quantile of the
 *   primary's latency, under its extra-load ceiling;
 * - `p95`: The Tail at Scale's hedged request — a backup at the primary's p95.
 */
export type HedgePolicyName = "gated" | "none" | "fixed-delay" | "percentile" | "p95";

export const HEDGE_POLICY_NAMES: readonly HedgePolicyName[] = Object.freeze([
  "gated",
  "none",
  "fixed-delay",
  "percentile",
  "p95",
]);

export interface HedgePolicy {
  readonly name: HedgePolicyName;
  /** `fixed-delay`: the delay, ms. */
  readonly delayMs?: number;
  /**
   * The extra-load ceiling (backups per primary branch) the policy runs under; absent: unbounded (gRPC A6
   * and The Tail at Scale have none). `percentile` also reads its quantile from it.
   */
  readonly maxExtraLoad?: number;
  /** `gated`: how often an outstanding branch is re-examined, ms. */
  readonly checkEveryMs?: number;
}

/** Why a backup was sent, waited for, or refused; `HEDGE_REASONS` (./reasons.ts) says when each is given. */
export type HedgeReason =
  | "tail-gain-exceeds-cost"
  | "delay-reached"
  | "percentile-reached"
  | "p95-reached"
  | "waiting-for-delay"
  | "gain-below-cost"
  | "worth-more-later"
  | "policy-none"
  | "backup-estimate-unknown"
  | "backup-p99-lower-bound"
  | "cannot-land"
  | "primary-estimate-unknown"
  | "extra-load-ceiling";

export type HedgeAction = "send" | "wait" | "refuse";

/** What one decision rests on: the numbers its reason's condition was evaluated with (NaN: not used). */
export interface HedgeNumbers {
  /** Time left to the fan-out's deadline, ms. */
  readonly remainingMs: number;
  /** How long the primary has been out, ms. */
  readonly primaryAgeMs: number;
  /** The backup replica's p99, and whether it is fresh and known, only a lower bound, or not fresh. */
  readonly backupP99Ms: number;
  readonly backupP99Kind: "known" | "lower-bound" | "unknown";
  /** The expected abandon cost of the backup's branch, ms. */
  readonly costMs: number;
  /** P(primary > remaining | outstanding at its age), from its censored CDF. */
  readonly primaryMissProbability: number;
  /** Expected caller ms a backup sent now saves. */
  readonly gainMs: number;
  /** Baselines: the delay the policy hedges after, ms from the primary's issue. */
  readonly delayMs: number;
}

export interface HedgeDecision extends HedgeNumbers {
  readonly action: HedgeAction;
  readonly reason: HedgeReason;
  /** `wait`: ask again at this time (the engine's clock, ms). */
  readonly retryAt?: number;
  /**
   * `send`: whether the backup can land by the rule's own test (remaining > fresh known p99 + cost) —
   * what every policy's backups are judged by; false for a backup sent on an unknown or lower-bound p99.
   */
  readonly landable?: boolean;
}

/** One moment at which a backup could be sent: a primary still out, and the spare that would back it up. */
export interface HedgeInput {
  readonly policy: HedgePolicy;
  readonly now: number;
  readonly deadline: number;
  readonly primary: PeerId;
  /** When the primary's branch was issued. */
  readonly primaryIssuedAt: number;
  readonly primaryEstimate: PeerEstimate;
  readonly backup: PeerId;
  readonly backupEstimate: PeerEstimate;
  /** P(latency of `peer` <= tMs) at `now`, from its censored CDF (a LatencyBook's `cdf`). */
  readonly cdf: (peer: PeerId, tMs: number) => number;
  /** The abandon ledger's expected cost of one cut branch, ms (measured or its prior). */
  readonly ledgerCostMs: number;
  /** Asked last, only when everything else says send: does the extra-load ceiling admit one more backup? */
  readonly ceilingAdmits: () => boolean;
}
