import { describe, expect, it } from "vitest";
import type { BranchRecord, FanoutOutcome } from "../../src/engine/outcome.js";
import { decide } from "../../src/policy/decide.js";
import { FlightRecorder } from "../../src/telemetry/flight-recorder.js";
import { formatDecisions } from "../../src/telemetry/format-decisions.js";
import { collectModel, rig, task } from "./helpers.js";

describe("FlightRecorder", () => {
  it("keeps the last N decisions with their reasons, newest first", async () => {
    const recorder = new FlightRecorder({ capacity: 3 });
    const h = rig(recorder);
    for (const p of ["a", "b"]) {
      h.transport.addPeer(p, { latency: 10, handler: () => p });
      h.warm(p, 10);
    }
    const budgets = [200, 5, 200, 30, 200];
    const ids: string[] = [];
    for (const budgetMs of budgets) {
      const o = await h.clock.runUntilSettled(
        h.coordinator.fanOut(task, {
          peers: ["a", "b"],
          budgetMs,
          model: collectModel(),
          fallback: () => "x",
        }),
      );
      ids.push(o.fanoutId);
    }
    expect(recorder.recorded).toBe(5);
    const last = recorder.last();
    expect(last.map((d) => d.fanoutId)).toEqual([ids[4], ids[3], ids[2]]);
    expect(recorder.last(1)[0]).toMatchObject({
      mode: "speculate",
      reason: "budget-exceeds-p99-plus-abandon-cost",
      budgetMs: 200,
      decisionRelevant: true,
      size: 2,
      requirement: "all",
      estimateStatus: "fresh",
      minSamples: 103, // 100 warm-up samples + one per earlier fan-out that reached the peers
      branches: { committed: 2, partial: 0, abandoned: 0, late: 0, failed: 0 },
      answered: 2,
      degraded: false,
      violation: null,
      traceId: null,
    });
    expect(recorder.last(10)).toHaveLength(3);
    expect(recorder.last(0)).toHaveLength(0);
    // JSON-safe
    expect(JSON.parse(JSON.stringify(last))).toEqual(last);
  });

  it("records degrade and violations", async () => {
    const recorder = new FlightRecorder();
    const h = rig(recorder);
    h.transport.addPeer("a", { latency: 50, handler: () => "a" });
    h.warm("a", 50);
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 20, model: collectModel(), fallback: () => "x" }),
    );
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: -1, model: collectModel(), fallback: () => "x" }),
    );
    const [violated, degraded] = recorder.last();
    expect(degraded).toMatchObject({ mode: "degrade", reason: "budget-at-or-below-p50", degraded: true });
    expect(violated!.violation?.code).toBe("SPECULATION_BUDGET_VIOLATION");
    expect(violated!.deadlineMissed).toBe(true);
  });

  it("adds the work lost by a branch whose report arrives after the fan-out ended", () => {
    const recorder = new FlightRecorder();
    const placeholder: BranchRecord = {
      peer: "c",
      branchId: "b1",
      outcome: "abandoned",
      deadline: 100,
      latencyMs: 100,
      lostWorkMs: 0,
      decisionRelevant: false,
      result: { kind: "abandoned", lostWorkMs: 0 },
      unsettled: true,
    };
    const outcome = {
      fanoutId: "f1",
      classification: {
        mode: "speculate",
        reason: "budget-exceeds-p99-plus-abandon-cost",
        budgetMs: 100,
        fanoutP50Ms: 10,
        fanoutP99Ms: 20,
        abandonCostMs: 0,
        relevant: true,
      },
      estimate: {
        status: "fresh",
        unknownPeers: [],
        p50Ms: 10,
        p99Ms: 20,
        requirement: { kind: "quorum", k: 1 },
        size: 1,
        maxAgeMs: Infinity,
        minSamples: 20,
      },
      action: "x",
      priorAction: "x",
      decisionChanged: false,
      degraded: false,
      branches: [placeholder],
      answered: 0,
      abandonCostMs: 0,
      infoGainPerCommitted: null,
      elapsedMs: 100,
      deadlineMissed: false,
    } satisfies FanoutOutcome;
    recorder.onFanoutEnd(outcome);
    recorder.onBranchEnd("f1", { ...placeholder, unsettled: false, lostWorkMs: 42 });
    recorder.onBranchEnd("f1", { ...placeholder, unsettled: false, lostWorkMs: 42 }); // once only
    expect(recorder.last(1)[0]).toMatchObject({
      lostWorkMs: 42,
      requirement: "quorum:1",
      estimateAgeMs: null,
    });

    // The ring writes each slot over in place: a decision read earlier keeps its numbers, and a late
    // report of a fan-out that left the ring adds nothing to the one that took its slot.
    const small = new FlightRecorder({ capacity: 1 });
    small.onFanoutEnd({ ...outcome, fanoutId: "g1", elapsedMs: 7 });
    const read = small.last(1)[0]!;
    small.onFanoutEnd({ ...outcome, fanoutId: "g2", elapsedMs: 9, branches: [] });
    small.onBranchEnd("g1", { ...placeholder, unsettled: false, lostWorkMs: 42 });
    expect(read).toMatchObject({ fanoutId: "g1", elapsedMs: 7, branches: { abandoned: 1 } });
    expect(small.last()).toEqual([
      expect.objectContaining({
        fanoutId: "g2",
        elapsedMs: 9,
        lostWorkMs: 0,
        branches: expect.objectContaining({ abandoned: 0 }),
      }),
    ]);
    expect(small.last()[0]).not.toHaveProperty("hedges");
  });

  it("shows a lower-bound quantile and the horizon as such", () => {
    const recorder = new FlightRecorder();
    const estimate = {
      status: "fresh",
      unknownPeers: [],
      p50Ms: 22,
      p99Ms: 87,
      p50Kind: "known",
      p99Kind: "lower-bound",
      horizonMs: 87,
      requirement: { kind: "all" },
      size: 2,
      maxAgeMs: 5,
      minSamples: 40,
    } as const;
    const classification = decide({
      policy: "p99-boundary",
      budgetMs: 400,
      estimate,
      abandonCostMs: 5,
      relevant: true,
      speculationFeasible: true,
      anyPeerLive: true,
      hasFallback: true,
    });
    recorder.onFanoutEnd({
      fanoutId: "f2",
      classification,
      estimate,
      action: "x",
      priorAction: "x",
      decisionChanged: false,
      degraded: false,
      branches: [],
      answered: 0,
      abandonCostMs: 0,
      infoGainPerCommitted: null,
      elapsedMs: 10,
      deadlineMissed: false,
    });
    const [d] = recorder.last(1);
    expect(d).toMatchObject({
      reason: "p99-lower-bound",
      p50Kind: "known",
      p99Kind: "lower-bound",
      horizonMs: 87,
      policy: "p99-boundary",
    });
    expect(d!.because).toContain("p99 (lower bound) 87 ms");
    const text = formatDecisions([d!]);
    expect(text).toContain("abandon cost 5.0 ms (p99-boundary's ledger)");
    expect(text).toContain("p99 87 ms (lower bound)");
    expect(text).toContain("horizon 87 ms");
  });

  it("rejects a bad capacity", () => {
    expect(() => new FlightRecorder({ capacity: 0 })).toThrow(/capacity/);
  });
});
