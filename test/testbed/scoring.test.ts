import { describe, expect, it } from "vitest";
import { policyStats } from "../../src/testbed/policy-stats.js";
import type { BranchRow, CallRecord } from "../../src/testbed/records.js";
import { parseScenario } from "../../src/testbed/scenario-loader.js";
import { scoreCall, scoreContext } from "../../src/testbed/score-call.js";
import { wilson } from "../../src/testbed/seed-observation.js";
import { decisionOptions, planPeers } from "../../src/testbed/topology.js";
import { netValue, sensitivity } from "../../src/testbed/value-model.js";

const scenario = parseScenario({
  name: "t",
  regions: [{ name: "r", peers: 4, latency: { body: { medianMs: 5, sigma: 0.3 } } }],
  gateways: [{ group: "g", region: "r", peers: 1, episodesPerSecond: 1, durationMs: { min: 100, max: 200 } }],
  coordinators: [{ name: "c", budgetMs: 90 }],
  valueModel: { continuationMs: 30, weights: { correct: 100, latencyPerMs: 1, abandonPerMs: 1, miss: 50 } },
});
const peers = planPeers(scenario); // r-g-01 (informed, weight 4), r-02, r-03, r-04
const decision = decisionOptions(scenario, peers) as {
  options: string[];
  prior: string;
  weights: Record<string, number>;
};
const ctx = scoreContext(peers, decision, 30);
const gw = peers.find((p) => p.informed)!.id;
const others = peers.filter((p) => !p.informed).map((p) => p.id);

const branch = (
  peer: string,
  outcome: string,
  pivotal = false,
  latencyMs = 20,
  lostWorkMs = 0,
): BranchRow => ({
  peer,
  outcome,
  pivotal,
  latencyMs,
  lostWorkMs,
  unsettled: false,
});

function call(over: Partial<CallRecord>): CallRecord {
  return {
    t: 0,
    coordinator: "c",
    budgetMs: 90,
    policy: "naive-p50",
    request: 0,
    truth: "hold",
    event: false,
    ok: true,
    rttMs: 25,
    action: "hold",
    mode: "speculate",
    elapsedMs: 22,
    decidedBudgetMs: 87, // the 90 ms budget less the coordinator's reply reserve
    deadlineMissed: false,
    infoGainPerCommitted: 0.1,
    branches: [],
    ...over,
  };
}

describe("scoring a call after the fact", () => {
  it("a speculation that commits overlaps the continuation and charges nothing thrown away", () => {
    const s = scoreCall(call({ branches: [gw, ...others].map((p) => branch(p, "committed")) }), ctx);
    expect(s).toMatchObject({
      mode: "speculate",
      correct: true,
      committed: 4,
      pivotalCommits: 0,
      speculationAbandoned: false,
    });
    expect(s.overlapMs).toBe(22);
    expect(s.completionMs).toBeCloseTo(25 + 30 - 22);
    expect(s.thrownMs).toBe(0);
  });

  it("a speculation cut at its deadline throws the continuation away and counts the branch that would have flipped", () => {
    const r = call({
      truth: "act",
      event: true,
      elapsedMs: 87,
      rttMs: 89,
      branches: [branch(gw, "abandoned", false, 87, 80), ...others.map((p) => branch(p, "committed"))],
    });
    const s = scoreCall(r, ctx);
    expect(s).toMatchObject({ correct: false, abandoned: 1, pivotalCut: 1, speculationAbandoned: true });
    expect(s.thrownMs).toBe(30);
    expect(s.abandonLostMs).toBe(80);
    expect(s.completionMs).toBeCloseTo(89 + 30);
    // value = 0 (wrong) − 1·119 − 1·(30 + 80)
    expect(netValue(s, scenario.valueModel.weights)).toBeCloseTo(-229);
  });

  it("a speculation whose branch ran into its own deadline is abandoned, though the fan-out ended a little before its budget", () => {
    // the gateway branch was cut by its own deadline a little before the fan-out's (late, at 66 ms of a
    // 69.9 ms budget): the vote was still open, so the speculation was abandoned, not committed
    const r = call({
      truth: "act",
      event: true,
      elapsedMs: 66.3,
      decidedBudgetMs: 69.9,
      branches: [branch(gw, "late", false, 66, 60), ...others.map((p) => branch(p, "committed"))],
    });
    expect(scoreCall(r, ctx)).toMatchObject({ speculationAbandoned: true, wouldFlip: true, thrownMs: 30 });
    // branches abandoned because the answers had settled the vote do not make it abandoned
    const settled = call({
      branches: [
        branch(gw, "committed", false, 10),
        ...others.map((p) => branch(p, "abandoned", false, 10, 10)),
      ],
    });
    expect(scoreCall(settled, ctx)).toMatchObject({ speculationAbandoned: false, thrownMs: 0 });
  });

  it("synchronous branches are not speculative commits; late ones are lost work but not abandon cost", () => {
    const r = call({
      policy: "p99-boundary",
      mode: "synchronous",
      elapsedMs: 87,
      rttMs: 89,
      branches: [branch(gw, "late", false, 87, 85), ...others.map((p) => branch(p, "partial"))],
    });
    const s = scoreCall(r, ctx);
    expect(s).toMatchObject({
      speculativeBranches: 0,
      committed: 0,
      lateLostMs: 85,
      abandonLostMs: 0,
      thrownMs: 0,
    });
    const stats = policyStats([s], scenario.valueModel.weights);
    expect(stats).toMatchObject({
      commit_rate: null,
      pivotal_commit_rate: null,
      abandon_cost_ms_per_fanout: 0,
    });
    expect(stats.late_lost_work_ms_per_fanout).toBe(85);
  });

  it("peer work: one accounting whatever the mode — answers after the decision settled are redundant, cancelled or not", () => {
    // the gateway peer (weight 4) answers first and settles the vote: the other three (weight 1 each)
    // can no longer change it. A synchronous fan-out lets them finish; a speculation cancels them.
    const sync = scoreCall(
      call({
        policy: "always-sync",
        mode: "synchronous",
        branches: [
          branch(gw, "partial", false, 10),
          ...others.map((p, i) => branch(p, "partial", false, 20 + 10 * i)),
        ],
      }),
      ctx,
    );
    expect(sync).toMatchObject({ peerWorkUsedMs: 10, peerWorkCutMs: 0, peerWorkRedundantMs: 20 + 30 + 40 });
    const spec = scoreCall(
      call({
        branches: [
          branch(gw, "committed", false, 10),
          ...others.map((p) => branch(p, "abandoned", false, 10, 10)),
        ],
      }),
      ctx,
    );
    expect(spec).toMatchObject({ peerWorkUsedMs: 10, peerWorkCutMs: 0, peerWorkRedundantMs: 30 });
    // the same weight per wasted ms: the synchronous call pays for the 90 ms it let run, the speculation
    // for the 30 ms it cancelled
    const w = scenario.valueModel.weights;
    expect(netValue(sync, w)).toBeCloseTo(100 - sync.completionMs - 90);
    expect(netValue(spec, w)).toBeCloseTo(100 - spec.completionMs - 30);
    const stats = policyStats([sync, spec], w);
    expect(stats).toMatchObject({
      peer_work_used_ms_per_fanout: 10,
      peer_work_cut_ms_per_fanout: 0,
      peer_work_redundant_ms_per_fanout: 60,
    });
  });

  it("peer work: a branch cut while its answer could still change the action is cut off, not redundant", () => {
    const r = call({
      truth: "act",
      event: true,
      elapsedMs: 87,
      rttMs: 89,
      branches: [branch(gw, "abandoned", false, 87, 80), ...others.map((p) => branch(p, "committed"))],
    });
    // the three answers (hold) cannot outvote the gateway's weight 4: the vote is open until the cut
    expect(scoreCall(r, ctx)).toMatchObject({
      peerWorkUsedMs: 60,
      peerWorkCutMs: 80,
      peerWorkRedundantMs: 0,
    });
    // a failed branch reports no work, and stops being outstanding: in a synchronous fan-out without
    // the gateway's vote, two answers settle the plurality and the third is redundant
    const failed = scoreCall(
      call({
        mode: "synchronous",
        branches: [
          branch(gw, "failed", false, 5),
          ...others.map((p, k) => branch(p, "partial", false, 20 + k)),
        ],
      }),
      ctx,
    );
    expect(failed).toMatchObject({ peerWorkUsedMs: 41, peerWorkCutMs: 0, peerWorkRedundantMs: 22 });
  });

  it("abandon_cost_estimate_ms is the median cost the policy's calls were decided with, over those that gave one", () => {
    const calls = [3, 1, 200, undefined].map((x) =>
      scoreCall(call(x === undefined ? {} : { decidedAbandonCostMs: x }), ctx),
    );
    calls.push(scoreCall(call({ ok: false, code: "DEADLINE_EXCEEDED" }), ctx));
    expect(policyStats(calls, scenario.valueModel.weights).abandon_cost_estimate_ms).toBe(3);
    expect(policyStats(calls.slice(3), scenario.valueModel.weights).abandon_cost_estimate_ms).toBeNull();
  });

  it("a failed call is a missed deadline decided by the caller's prior", () => {
    const s = scoreCall(
      call({ ok: false, code: "DEADLINE_EXCEEDED", rttMs: 95, truth: "act", event: true }),
      ctx,
    );
    expect(s).toMatchObject({ mode: "error", miss: true, correct: false, completionMs: 120 });
  });

  it("policy fields: commit rate per branch, commits per fan-out, pivotal commit rate", () => {
    const a = scoreCall(call({ branches: [gw, ...others].map((p) => branch(p, "committed")) }), ctx);
    const b = scoreCall(
      call({
        truth: "act",
        action: "act",
        event: true,
        branches: [
          branch(gw, "committed", true),
          ...others.map((p, i) => branch(p, i === 0 ? "abandoned" : "committed")),
        ],
      }),
      ctx,
    );
    const d = scoreCall(call({ mode: "degrade", branches: [], elapsedMs: 0.2, rttMs: 2 }), ctx);
    const stats = policyStats([a, b, d], scenario.valueModel.weights);
    expect(stats.fanouts).toBe(3);
    expect(stats.speculative_branches).toBe(8);
    expect(stats.commit_rate).toBeCloseTo(7 / 8);
    expect(stats.commits_per_fanout).toBeCloseTo(7 / 3, 2);
    expect(stats.pivotal_commit_rate).toBeCloseTo(1 / 7, 3);
    expect(stats.accuracy).toBe(1);
    expect(stats.mode_mix).toMatchObject({ speculate: 0.6667, degrade: 0.3333 });
  });

  it("the sensitivity grid covers every combination and names the best policy per row", () => {
    const s = parseScenario({
      ...{
        name: "g",
        regions: [{ name: "r", peers: 1, latency: { body: { medianMs: 5 } } }],
        coordinators: [{ name: "c", budgetMs: 9 }],
      },
      valueModel: { grid: { correct: [1, 2], latencyPerMs: [0, 1], abandonPerMs: [0, 1, 2] } },
    });
    const good = scoreCall(call({ mode: "degrade", rttMs: 1, elapsedMs: 0 }), ctx);
    const bad = scoreCall(call({ ok: false, code: "UNAVAILABLE" }), ctx);
    const rows = sensitivity(
      new Map([
        ["a", [good]],
        ["b", [bad]],
      ]),
      s.valueModel,
    );
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.best.includes("a"))).toBe(true);
  });
});

describe("decision relevance at the level of the fan-out", () => {
  // two gateway peers (weight 2 each) outvote the three others only together
  const s2 = parseScenario({
    name: "t2",
    regions: [{ name: "r", peers: 5, latency: { body: { medianMs: 5, sigma: 0.3 } } }],
    gateways: [
      { group: "g", region: "r", peers: 2, episodesPerSecond: 1, durationMs: { min: 100, max: 200 } },
    ],
    coordinators: [{ name: "c", budgetMs: 90 }],
    valueModel: { continuationMs: 30, weights: { correct: 100, latencyPerMs: 1, abandonPerMs: 1, miss: 50 } },
  });
  const p2 = planPeers(s2);
  const ctx2 = scoreContext(
    p2,
    decisionOptions(s2, p2) as { options: string[]; prior: string; weights: Record<string, number> },
    30,
  );
  const gws = p2.filter((p) => p.informed).map((p) => p.id);
  const rest = p2.filter((p) => !p.informed).map((p) => p.id);

  it("an abandoned speculation whose cut-off answers flip the action together, though none does alone", () => {
    const r = call({
      truth: "act",
      event: true,
      elapsedMs: 87,
      rttMs: 89,
      branches: [
        ...gws.map((p) => branch(p, "abandoned", false, 87, 80)),
        ...rest.map((p) => branch(p, "committed")),
      ],
    });
    const x = scoreCall(r, ctx2);
    expect(x).toMatchObject({
      speculationAbandoned: true,
      pivotalCut: 0,
      wouldFlip: true,
      decisionRelevant: false,
    });
    const stats = policyStats([x], s2.valueModel.weights);
    expect(stats.would_flip_share_of_abandoned).toBe(1);
    expect(stats.pivotal_share_of_cut).toBe(0);
    expect(stats.fanout_decision_relevant_commit_rate).toBeNull();
  });

  it("a committed speculation is decision-relevant when its action differs from the local decision", () => {
    const all = [...gws, ...rest].map((p) => branch(p, "committed"));
    const relevant = scoreCall(call({ truth: "act", action: "act", event: true, branches: all }), ctx2);
    const not = scoreCall(call({ branches: all }), ctx2);
    const degraded = scoreCall(call({ mode: "degrade", branches: [], action: "hold" }), ctx2);
    expect(relevant.decisionRelevant).toBe(true);
    expect(not.decisionRelevant).toBe(false);
    expect(degraded.decisionRelevant).toBe(false);
    const stats = policyStats([relevant, not, degraded], s2.valueModel.weights);
    expect(stats.fanout_decision_relevant_commit_rate).toBe(0.5);
    expect(stats.would_flip_share_of_abandoned).toBeNull();
  });
});

describe("the founding note's observation with intervals", () => {
  it("Wilson intervals hold the rate, stay in [0, 1], and are null with nothing counted", () => {
    expect(wilson(0, 0)).toEqual({ value: null, lo95: null, hi95: null, n: 0 });
    const w = wilson(3, 10);
    expect(w.value).toBe(0.3);
    expect(w.lo95!).toBeGreaterThan(0.1);
    expect(w.lo95!).toBeLessThan(0.3);
    expect(w.hi95!).toBeGreaterThan(0.3);
    expect(wilson(10, 10).hi95).toBe(1);
    expect(wilson(0, 10).lo95).toBe(0);
  });
});
