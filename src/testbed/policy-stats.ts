/**
 * The per-policy fields of report.json from the scored calls (docs/value-model.md, "Fields").
 */
import type { ScoredCall } from "./score-call.js";
import type { ValueWeights } from "./scenario-types.js";
import { nearestRank } from "../util/nearest-rank.js";
import { meanNetValue, round } from "./value-model.js";

export interface PolicyStats {
  readonly fanouts: number;
  readonly speculative_branches: number;
  readonly commit_rate: number | null;
  readonly commits_per_fanout: number;
  /**
   * Committed speculative fan-outs whose action differs from the local decision without fanning out /
   * committed speculative fan-outs: the fan-out-level decision-relevant commit rate (the headline).
   */
  readonly fanout_decision_relevant_commit_rate: number | null;
  /** Committed speculative branches that were pivotal (leave-one-out) / committed speculative branches. */
  readonly pivotal_commit_rate: number | null;
  readonly info_gain_per_committed_branch: number | null;
  readonly abandon_cost_ms_per_fanout: number;
  readonly deadline_misses: number;
  readonly accuracy: number;
  readonly net_value_per_fanout: number;
  // ---- more than the required fields ----
  readonly mode_mix: Record<string, number>;
  readonly speculative_fanouts: number;
  /** Speculative fan-outs that decided before their deadline / speculative fan-outs (the founding note's "branch commit rate"). */
  readonly speculation_commit_rate: number | null;
  readonly abandoned_branches: number;
  /** Abandoned speculative fan-outs whose cut-off answers, together with the used ones, would have flipped the action / abandoned speculative fan-outs. */
  readonly would_flip_share_of_abandoned: number | null;
  /** Abandoned or late branches whose answer alone would have changed the decision, per fan-out. */
  readonly pivotal_cut_per_fanout: number;
  /** Share of abandoned/late branches whose answer alone would have changed the decision. */
  readonly pivotal_share_of_cut: number | null;
  readonly late_lost_work_ms_per_fanout: number;
  /**
   * Peer work per fan-out, one accounting for every mode (score-call.ts, `peerWork`): used (in the
   * deciding set), and wasted — cut off, or redundant (ended after the decision was settled).
   */
  readonly peer_work_used_ms_per_fanout: number;
  readonly peer_work_cut_ms_per_fanout: number;
  readonly peer_work_redundant_ms_per_fanout: number;
  /** The coordinator's continuation work thrown away by abandoned speculations, per fan-out, ms. */
  readonly thrown_ms_per_fanout: number;
  /**
   * The abandon cost this policy's fan-outs were decided with — its own ledger at the coordinator —
   * median over its answered calls, ms; null when none gave one.
   */
  readonly abandon_cost_estimate_ms: number | null;
  readonly overlap_ms_per_fanout: number;
  readonly completion_ms_mean: number;
  readonly accuracy_during_events: number | null;
  readonly errors: number;
}

export function policyStats(calls: readonly ScoredCall[], weights: ValueWeights): PolicyStats {
  const n = calls.length;
  let spec = 0;
  let committed = 0;
  let pivotal = 0;
  let bits = 0;
  let abandonCost = 0;
  let misses = 0;
  let correct = 0;
  let specFanouts = 0;
  let specAbandoned = 0;
  let abandoned = 0;
  let pivotalCut = 0;
  let relevantSpec = 0;
  let flipAbandoned = 0;
  let lostBranches = 0;
  let late = 0;
  let overlap = 0;
  let completion = 0;
  let events = 0;
  let eventsCorrect = 0;
  let errors = 0;
  let used = 0;
  let cut = 0;
  let redundant = 0;
  let thrown = 0;
  const mix: Record<string, number> = { speculate: 0, synchronous: 0, degrade: 0, error: 0 };
  for (const c of calls) {
    mix[c.mode] = (mix[c.mode] ?? 0) + 1;
    spec += c.speculativeBranches;
    committed += c.committed;
    pivotal += c.pivotalCommits;
    bits += c.committedBits;
    abandonCost += c.abandonLostMs + c.thrownMs;
    if (c.miss) misses++;
    if (c.correct) correct++;
    if (c.mode === "speculate") {
      specFanouts++;
      if (c.speculationAbandoned) {
        specAbandoned++;
        if (c.wouldFlip) flipAbandoned++;
      } else if (c.decisionRelevant) relevantSpec++;
    }
    if (c.mode === "error") errors++;
    abandoned += c.abandoned;
    pivotalCut += c.pivotalCut;
    late += c.lateLostMs;
    overlap += c.overlapMs;
    completion += c.completionMs;
    if (c.event) {
      events++;
      if (c.correct) eventsCorrect++;
    }
    lostBranches += c.abandoned + c.late;
    used += c.peerWorkUsedMs;
    cut += c.peerWorkCutMs;
    redundant += c.peerWorkRedundantMs;
    thrown += c.thrownMs;
  }
  const per = (x: number): number => (n === 0 ? 0 : x / n);
  const ratio = (a: number, b: number): number | null => (b === 0 ? null : round(a / b, 4));
  for (const k of Object.keys(mix)) mix[k] = round(per(mix[k]!), 4);
  return {
    fanouts: n,
    speculative_branches: spec,
    commit_rate: ratio(committed, spec),
    commits_per_fanout: round(per(committed), 3),
    fanout_decision_relevant_commit_rate: ratio(relevantSpec, specFanouts - specAbandoned),
    pivotal_commit_rate: ratio(pivotal, committed),
    info_gain_per_committed_branch: ratio(bits, committed),
    abandon_cost_ms_per_fanout: round(per(abandonCost), 2),
    deadline_misses: misses,
    accuracy: round(per(correct), 4),
    net_value_per_fanout: round(meanNetValue(calls, weights), 3),
    mode_mix: mix,
    speculative_fanouts: specFanouts,
    speculation_commit_rate: ratio(specFanouts - specAbandoned, specFanouts),
    abandoned_branches: abandoned,
    would_flip_share_of_abandoned: ratio(flipAbandoned, specAbandoned),
    pivotal_cut_per_fanout: round(per(pivotalCut), 4),
    pivotal_share_of_cut: ratio(pivotalCut, lostBranches),
    late_lost_work_ms_per_fanout: round(per(late), 2),
    peer_work_used_ms_per_fanout: round(per(used), 2),
    peer_work_cut_ms_per_fanout: round(per(cut), 2),
    peer_work_redundant_ms_per_fanout: round(per(redundant), 2),
    thrown_ms_per_fanout: round(per(thrown), 2),
    abandon_cost_estimate_ms: median(calls.map((c) => c.decidedAbandonCostMs)),
    overlap_ms_per_fanout: round(per(overlap), 2),
    completion_ms_mean: round(per(completion), 2),
    accuracy_during_events: ratio(eventsCorrect, events),
    errors,
  };
}

/** The median of the finite values (nearest rank), rounded to 0.01; null when there are none. */
export function median(xs: readonly number[]): number | null {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const m = nearestRank(v, 0.5);
  return m === undefined ? null : round(m, 2);
}
