/**
 * The one owner of the hedging decision: whether a backup branch goes to a spare replica now, waits, or is
 * refused, under any policy (`HedgePolicy`), with its reason (`HEDGE_REASONS`) and the numbers its
 * condition was evaluated with. Pure: the engine (src/engine/hedge-fanout.ts) does what it says.
 *
 * The gated rule is the fan-out rule applied to one speculative backup (docs/hedging.md): send to replica
 * j when `remaining > p99(j) + cost` (it can land; a lower-bound p99 never passes) and `gain > cost`, and
 * no later moment it could still land is worth more — without that last test a heavy tail makes a backup
 * at t = 0 look worth it on every request. `cost` is the larger of the ledger's cost of a cut branch and
 * the backup's modelled run time, since a sent backup runs until the pair's first answer. Every backup
 * any policy sends carries `landable`, the first test, so the report counts those that could not land.
 */
import { quantileOf, STEPS, tailGainSchedule } from "./expected-gain.js";
import type { TailGainSchedule } from "./expected-gain.js";
import { HEDGE_DEFAULTS } from "./options.js";
import { HEDGE_REASONS } from "./reasons.js";
import type { HedgeDecision, HedgeInput, HedgeNumbers, HedgeReason } from "./types.js";

/** How close to the last useful moment the gated rule takes its final look, ms. */
const LAST_LOOK_MS = 0.5;

export function decideBackup(input: HedgeInput): HedgeDecision {
  const p = input.policy;
  const g = scheduleOf(input);
  const n = numbersOf(input, g);
  switch (p.name) {
    case "none":
      return decision("policy-none", n);
    case "gated":
      return gated(input, n, g);
    case "fixed-delay":
      return afterDelay(input, n, p.delayMs ?? NaN, "delay-reached");
    case "percentile": {
      if (input.primaryEstimate.status !== "fresh") return decision("primary-estimate-unknown", n);
      const q = 1 - (p.maxExtraLoad ?? HEDGE_DEFAULTS.maxExtraLoad);
      return afterDelay(input, n, quantileOf(input.cdf, input.primary, q), "percentile-reached");
    }
    case "p95":
      if (input.primaryEstimate.status !== "fresh") return decision("primary-estimate-unknown", n);
      return afterDelay(input, n, quantileOf(input.cdf, input.primary, 0.95), "p95-reached");
  }
}

/** Whether a backup sent with these numbers can land by the rule's first test. */
export function canLand(n: HedgeNumbers): boolean {
  return n.backupP99Kind === "known" && n.remainingMs > n.backupP99Ms + n.costMs;
}

function gated(input: HedgeInput, n: HedgeNumbers, g: TailGainSchedule | undefined): HedgeDecision {
  if (input.backupEstimate.status !== "fresh") return decision("backup-estimate-unknown", n);
  if (n.backupP99Kind !== "known") return decision("backup-p99-lower-bound", n);
  if (input.primaryEstimate.status !== "fresh" || g === undefined)
    return decision("primary-estimate-unknown", n);
  if (!canLand(n)) return decision("cannot-land", n);
  const every = input.policy.checkEveryMs ?? HEDGE_DEFAULTS.checkEveryMs;
  if (!(n.gainMs > n.costMs)) {
    const lastUseful = input.deadline - n.backupP99Ms - n.costMs;
    if (input.now + every < lastUseful) return decision("gain-below-cost", n, input.now + every);
    if (lastUseful - input.now > LAST_LOOK_MS)
      return decision("gain-below-cost", n, lastUseful - LAST_LOOK_MS);
    return { ...n, action: "refuse", reason: "gain-below-cost" };
  }
  const now = n.gainMs - n.costMs;
  for (let j = 1; j < STEPS; j++) {
    const cost = Math.max(input.ledgerCostMs, g.workMs[j] as number);
    if (!(n.remainingMs - j * g.stepMs > n.backupP99Ms + cost)) break;
    if ((g.stillOut[j] as number) * ((g.gainMs[j] as number) - cost) > now)
      return decision("worth-more-later", n, input.now + Math.min(every, j * g.stepMs));
  }
  if (!input.ceilingAdmits()) return decision("extra-load-ceiling", n);
  return { ...decision("tail-gain-exceeds-cost", n), landable: true };
}

function afterDelay(
  input: HedgeInput,
  base: HedgeNumbers,
  delayMs: number,
  reason: HedgeReason,
): HedgeDecision {
  const n = { ...base, delayMs };
  if (!Number.isFinite(delayMs)) return decision("primary-estimate-unknown", n);
  const at = input.primaryIssuedAt + delayMs;
  if (input.now < at) return decision("waiting-for-delay", n, at);
  if (input.policy.maxExtraLoad !== undefined && !input.ceilingAdmits())
    return decision("extra-load-ceiling", n);
  return { ...decision(reason, n), landable: canLand(n) };
}

function decision(reason: HedgeReason, n: HedgeNumbers, retryAt?: number): HedgeDecision {
  const action = HEDGE_REASONS[reason].action;
  return action === "wait" && retryAt !== undefined
    ? { ...n, action, reason, retryAt }
    : { ...n, action, reason };
}

function scheduleOf(input: HedgeInput): TailGainSchedule | undefined {
  if (input.primaryEstimate.status !== "fresh" || input.backupEstimate.status !== "fresh") return undefined;
  const age = input.now - input.primaryIssuedAt;
  return tailGainSchedule(input.cdf, input.primary, age, input.backup, input.deadline - input.now);
}

function numbersOf(input: HedgeInput, g: TailGainSchedule | undefined): HedgeNumbers {
  const remainingMs = input.deadline - input.now;
  const primaryAgeMs = input.now - input.primaryIssuedAt;
  const b = input.backupEstimate;
  const backupP99Kind =
    b.status !== "fresh" ? "unknown" : b.p99Kind === "lower-bound" ? "lower-bound" : "known";
  return {
    remainingMs,
    primaryAgeMs,
    backupP99Ms: b.p99Ms,
    backupP99Kind,
    costMs: Math.max(input.ledgerCostMs, g?.workMs[0] ?? 0),
    primaryMissProbability: g?.miss[0] ?? NaN,
    gainMs: g?.gainMs[0] ?? NaN,
    delayMs: NaN,
  };
}
