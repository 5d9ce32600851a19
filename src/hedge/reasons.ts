/**
 * The one table of hedging reasons: for each, the action `decideBackup` takes with it and the condition
 * (true for the numbers the decision carries). docs/hedging.md prints the same table; a test keeps them
 * equal.
 */
import type { HedgeAction, HedgeReason } from "./types.js";

export interface HedgeReasonSpec {
  readonly action: HedgeAction;
  readonly when: string;
}

export const HEDGE_REASONS: { readonly [R in HedgeReason]: HedgeReasonSpec } = {
  "tail-gain-exceeds-cost": {
    action: "send",
    when: "`gated`: `remaining > p99(backup) + cost` (p99 fresh and known) and `gain > cost`, ceiling admits",
  },
  "delay-reached": {
    action: "send",
    when: "`fixed-delay`: the primary has been out `delayMs`, ceiling admits (none by default)",
  },
  "percentile-reached": {
    action: "send",
    when: "`percentile`: the primary has been out its `1 − maxExtraLoad` quantile, ceiling admits",
  },
  "p95-reached": {
    action: "send",
    when: "`p95`: the primary has been out its p95, ceiling admits (none by default)",
  },
  "waiting-for-delay": {
    action: "wait",
    when: "a baseline: the primary has been out less than its delay",
  },
  "gain-below-cost": {
    action: "wait",
    when: "`gated`: the backup can land but `gain <= cost`; asked again until `remaining <= p99(backup) + cost`, then refused",
  },
  "worth-more-later": {
    action: "wait",
    when: "`gated`: `gain > cost` now, but a later moment it could still land is worth more: `P(still out then) × (gain − cost) then` is larger",
  },
  "policy-none": { action: "refuse", when: "`none`: never a backup" },
  "backup-estimate-unknown": {
    action: "refuse",
    when: "`gated`: the spare replica's estimate is not fresh",
  },
  "backup-p99-lower-bound": {
    action: "refuse",
    when: "`gated`: the spare replica's p99 is only a lower bound (censored mass beyond its completions)",
  },
  "cannot-land": {
    action: "refuse",
    when: "`gated`: `remaining <= p99(backup) + cost` — the backup would not land by the deadline",
  },
  "primary-estimate-unknown": {
    action: "refuse",
    when: "the primary's estimate is not fresh: no conditional tail (`gated`) or no percentile (baselines)",
  },
  "extra-load-ceiling": {
    action: "refuse",
    when: "the policy's extra-load ceiling would be exceeded by one more backup",
  },
};

/**
 * Refusals about the spare replica itself — its estimate is not fresh, its p99 is only a lower bound, or
 * its p99 plus cost does not fit what is left — rather than about the moment or the primary: the engine
 * then asks the next spare in the router's order.
 */
export const SPARE_REFUSALS: ReadonlySet<HedgeReason> = new Set<HedgeReason>([
  "backup-estimate-unknown",
  "backup-p99-lower-bound",
  "cannot-land",
]);
