/**
 * Scoring of the replicated scenario: per budget and policy, the caller's latency quantiles, deadline
 * misses, extra load, the work cut from losers, the backups that could not land; the budget-gated
 * policy against each baseline on the same requests (paired differences with 95% intervals); and the
 * goal, checked per budget from those numbers.
 *
 * A miss (an error, `deadline_missed`, or no reply by the deadline) counts at its budget, so a
 * quantile that lands on a miss is a lower bound: `p99_is_lower_bound` says when it does. The goal
 * reads the p99s over the requests every policy was answered in time (`answered_by_all`).
 */
import type { HedgePolicyName } from "../../hedge/types.js";
import { nearestRank } from "../../util/nearest-rank.js";
import { pairCalls, pairedDifference } from "../paired-difference.js";
import type { PairedDifference } from "../paired-difference.js";
import { round } from "../value-model.js";

/** One request under one policy, as the caller saw it. */
export interface ReplicatedCall {
  /** The budget's stream (`budget-<ms>`): with `request`, what pairs the copies of a request. */
  readonly coordinator: string;
  readonly request: number;
  readonly budgetMs: number;
  readonly policy: HedgePolicyName;
  /** gRPC status name, OK when answered. */
  readonly code: string;
  /** From the call's start to its reply, ms; its budget when missed. */
  readonly latencyMs: number;
  readonly missed: boolean;
  readonly primaries: number;
  readonly backups: number;
  readonly backupsWon: number;
  /** Backups sent that could not land (remaining budget <= the replica's fresh, known p99 + cost). */
  readonly unlandable: number;
  /**
   * Run time of every branch cut (a loser, or one still out at the deadline) from its issue to the cut,
   * as the coordinator recorded it, ms: the peers' own lost-work reports arrive after the reply.
   */
  readonly cutWorkMs: number;
  readonly refused: Readonly<Record<string, number>>;
  /** The spare replicas' p99 as the coordinator's refusals state it, ms (known or lower bound). */
  readonly refusedBackupP99Ms: readonly number[];
}

export interface Quantiles {
  readonly requests: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly p999_ms: number | null;
  /** The p99 (p99.9) lands on a miss, counted at its budget: the true quantile is at least this. */
  readonly p99_is_lower_bound: boolean;
  readonly p999_is_lower_bound: boolean;
}

export interface PolicyCell extends Quantiles {
  /**
   * The same quantiles over the requests every policy got a reply to in time: a request whose reply
   * came late under some policy (a gRPC error) is left out under all of them. When every copy of a
   * request is late at once, the node or the machine stalled, not a replica.
   */
  readonly answered_by_all: Quantiles;
  readonly deadline_misses: number;
  /** Misses that were a gRPC error (no reply by the deadline) rather than a reply saying so. */
  readonly errors: number;
  /** Backups per primary branch, %. */
  readonly extra_load_pct: number;
  readonly backups: number;
  readonly backups_won: number;
  readonly backups_unlandable: number;
  readonly cut_work_ms_per_request: number;
  readonly refused: Record<string, number>;
  /** Median of the spare replicas' p99 the refusals state, ms; null when none was refused with one. */
  readonly refused_backup_p99_median_ms: number | null;
}

export interface GatedVersus {
  readonly baseline: HedgePolicyName;
  /** gated − baseline per request: latency (ms), miss (0/1), backups sent. */
  readonly latency_ms: PairedDifference | null;
  readonly miss: PairedDifference | null;
  readonly backups: PairedDifference | null;
  readonly cut_work_ms: PairedDifference | null;
}

export interface BudgetGoal {
  /** p99(none) − p99(policy), ms, per policy. */
  readonly p99_cut_ms: Record<string, number | null>;
  /** The baseline with the largest p99 cut (null when none was measured). */
  readonly best_baseline: HedgePolicyName | null;
  /**
   * gated's p99 cut >= the best baseline's, with at most half its extra load (answered_by_all p99s);
   * null when it cannot be read (a p99 that is only a lower bound, a policy not run).
   */
  readonly met: boolean | null;
  readonly because: string;
}

export interface BudgetReport {
  readonly budget_ms: number;
  /** Below the replicas' modelled p99: a backup sent here mostly cannot land. */
  readonly below_replica_p99: boolean;
  readonly policies: Record<string, PolicyCell>;
  readonly gated_versus: readonly GatedVersus[];
  readonly goal: BudgetGoal;
}

const BASELINES: readonly HedgePolicyName[] = ["fixed-delay", "percentile", "p95"];

export function scoreBudget(
  calls: readonly ReplicatedCall[],
  budgetMs: number,
  policies: readonly HedgePolicyName[],
  replicaP99Ms: number,
): BudgetReport {
  const at = calls.filter((c) => c.budgetMs === budgetMs);
  const by = new Map(policies.map((p) => [p, at.filter((c) => c.policy === p)] as const));
  const late = new Set(at.filter((c) => c.code !== "OK").map((c) => c.request));
  const cells: Record<string, PolicyCell> = {};
  for (const [p, cs] of by) cells[p] = cell(cs, late);
  const gated = by.get("gated");
  const versus: GatedVersus[] = [];
  if (gated !== undefined) {
    for (const p of policies) {
      if (p === "gated") continue;
      const pairs = pairCalls(gated, by.get(p)!);
      versus.push({
        baseline: p,
        latency_ms: pairedDifference(pairs, (c) => c.latencyMs),
        miss: pairedDifference(pairs, (c) => (c.missed ? 1 : 0)),
        backups: pairedDifference(pairs, (c) => c.backups),
        cut_work_ms: pairedDifference(pairs, (c) => c.cutWorkMs),
      });
    }
  }
  return {
    budget_ms: budgetMs,
    below_replica_p99: budgetMs < replicaP99Ms,
    policies: cells,
    gated_versus: versus,
    goal: goal(cells),
  };
}

function quantiles(cs: readonly ReplicatedCall[]): Quantiles {
  const lat = cs.map((c) => c.latencyMs).sort((a, b) => a - b);
  const missLat = new Set(cs.filter((c) => c.missed).map((c) => c.latencyMs));
  const q = (x: number): number | null => {
    const v = nearestRank(lat, x);
    return v === undefined ? null : round(v, 2);
  };
  const onMiss = (x: number): boolean => {
    const v = nearestRank(lat, x);
    return v !== undefined && missLat.has(v);
  };
  return {
    requests: cs.length,
    p50_ms: q(0.5),
    p99_ms: q(0.99),
    p999_ms: q(0.999),
    p99_is_lower_bound: onMiss(0.99),
    p999_is_lower_bound: onMiss(0.999),
  };
}

function cell(cs: readonly ReplicatedCall[], late: ReadonlySet<number>): PolicyCell {
  const sum = (f: (c: ReplicatedCall) => number): number => cs.reduce((s, c) => s + f(c), 0);
  const primaries = sum((c) => c.primaries);
  const refused: Record<string, number> = {};
  for (const c of cs) for (const [r, n] of Object.entries(c.refused)) refused[r] = (refused[r] ?? 0) + n;
  const p99s = cs.flatMap((c) => c.refusedBackupP99Ms).sort((a, b) => a - b);
  const medianP99 = nearestRank(p99s, 0.5);
  return {
    ...quantiles(cs),
    answered_by_all: quantiles(cs.filter((c) => !late.has(c.request))),
    deadline_misses: cs.filter((c) => c.missed).length,
    errors: cs.filter((c) => c.code !== "OK").length,
    extra_load_pct: primaries === 0 ? 0 : round((100 * sum((c) => c.backups)) / primaries, 2),
    backups: sum((c) => c.backups),
    backups_won: sum((c) => c.backupsWon),
    backups_unlandable: sum((c) => c.unlandable),
    cut_work_ms_per_request: cs.length === 0 ? 0 : round(sum((c) => c.cutWorkMs) / cs.length, 2),
    refused,
    refused_backup_p99_median_ms: medianP99 === undefined ? null : round(medianP99, 1),
  };
}

function goal(cells: Record<string, PolicyCell>): BudgetGoal {
  const none = cells.none?.answered_by_all.p99_ms ?? null;
  const cut: Record<string, number | null> = {};
  for (const [p, c] of Object.entries(cells)) {
    const own = c.answered_by_all.p99_ms;
    cut[p] = none === null || own === null ? null : round(none - own, 2);
  }
  let best: HedgePolicyName | null = null;
  for (const b of BASELINES) {
    const v = cut[b];
    if (v === null || v === undefined) continue;
    if (best === null || v > (cut[best] as number)) best = b;
  }
  const g = cut.gated;
  if (best === null || g === null || g === undefined)
    return {
      p99_cut_ms: cut,
      best_baseline: best,
      met: null,
      because: "gated, none or every baseline not run",
    };
  const bounded = (["none", "gated", best] as const).filter(
    (p) => cells[p]!.answered_by_all.p99_is_lower_bound,
  );
  const bc0 = cut[best] as number;
  if (bounded.length === 1 && bounded[0] === "gated" && g < bc0)
    return {
      p99_cut_ms: cut,
      best_baseline: best,
      met: false,
      because: `gated's p99 is only a lower bound (a miss at the budget), so it cuts p99 by at most ${g} ms; the best baseline, ${best}, by ${bc0} ms`,
    };
  if (bounded.length > 0)
    return {
      p99_cut_ms: cut,
      best_baseline: best,
      met: null,
      because: `the p99 of ${bounded.join(", ")} is only a lower bound (a miss at the budget): no cut can be read`,
    };
  const bc = cut[best] as number;
  const gl = cells.gated!.extra_load_pct;
  const bl = cells[best]!.extra_load_pct;
  const met = g >= bc && gl <= bl / 2;
  const because =
    `gated cuts p99 by ${g} ms at ${gl}% extra load; the best baseline, ${best}, by ${bc} ms at ${bl}%` +
    (met
      ? ""
      : g < bc
        ? ` — gated's cut is ${round(bc - g, 2)} ms short`
        : ` — gated's extra load is above half of ${best}'s`);
  return { p99_cut_ms: cut, best_baseline: best, met, because };
}
